{#- The rows of a source's change feed that a source_changes read names. -#}
{% macro source_changes_relation(source, changes) -%}
    {%- if changes.kind == 'since' -%}
        {{ changes.relation }}
    {%- else -%}
        (select *, cast(null as string) as _change_type from {{ source }} where false)
    {%- endif -%}
{%- endmacro %}
