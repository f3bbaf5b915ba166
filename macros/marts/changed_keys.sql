{#- The keys an incremental mart recomputes for a source's changes. -#}
{% macro changed_keys(source, changes, columns) -%}
    {%- if changes.kind == 'all' -%}
        select {{ columns | join(', ') }} from {{ source }}
        union
        select {{ columns | join(', ') }} from {{ this }}
    {%- else -%}
        select distinct {{ columns | join(', ') }}
        from {{ source_changes_relation(source, changes) }}
    {%- endif -%}
{%- endmacro %}
