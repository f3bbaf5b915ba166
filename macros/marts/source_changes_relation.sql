{#- The rows of a source's change feed that a source_changes read names (no row when there is
    none to read, with the feed's own columns). -#}
{% macro source_changes_relation(source, changes) -%}
    {%- if changes.kind == 'since' -%}
        {{ changes.relation }}
    {%- else -%}
        (
            select
                *,
                cast(null as string) as _change_type,
                cast(null as bigint) as _commit_version,
                cast(null as timestamp) as _commit_timestamp
            from {{ source }}
            where false
        )
    {%- endif -%}
{%- endmacro %}
