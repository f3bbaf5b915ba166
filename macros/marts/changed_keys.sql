{#- The keys (`columns`) an incremental mart recomputes for the changes `changes` of `source`
    (source_changes): the keys of the feed's rows, before and after images alike; every key of
    `source` and of the mart for a read of all. -#}
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
