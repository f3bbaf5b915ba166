{#- The rows of `source`'s change feed a `source_changes` read names (a session view of Delta's
    before and after images, with _change_type), or no row when it reads none. -#}
{% macro source_changes_relation(source, changes) -%}
    {%- if changes.kind == 'since' -%}
        {{ changes.relation }}
    {%- else -%}
        (select *, cast(null as string) as _change_type from {{ source }} where false)
    {%- endif -%}
{%- endmacro %}
