{#- The rows of a source an incremental mart's run takes as changed. -#}
{% macro changed_rows(source, changes) -%}
    {%- if changes.kind == 'all' -%}
        {{ source }}
    {%- else -%}
        {{ source_changes_relation(source, changes) }}
    {%- endif -%}
{%- endmacro %}
