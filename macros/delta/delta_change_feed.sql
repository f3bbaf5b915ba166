{% macro delta_change_feed(relation, from_version, to_version) -%}
    {%- if from_version <= to_version -%}
        table_changes('{{ relation }}', {{ from_version }}, {{ to_version }})
    {%- else -%}
        (
            select
                *,
                cast(null as string) as _change_type,
                cast(null as bigint) as _commit_version,
                cast(null as timestamp) as _commit_timestamp
            from {{ relation }}
            where false
        )
    {%- endif -%}
{%- endmacro %}
