{#- The keys an incremental mart recomputes for a source's changes (laid out for a CTE body). -#}
{% macro changed_keys(source, changes, columns) -%}
    {#- one target on the select's line, several on lines of their own (sqlfluff LT09) -#}
    {%- set selected = ' ' ~ columns[0] if columns | length == 1 else '\n        ' ~ columns | join(',\n        ') -%}
    {%- if not is_incremental() -%}
        {{ 'select distinct' ~ selected ~ '\n    from ' ~ source }}
    {%- elif changes.kind == 'all' -%}
        {{ 'select' ~ selected ~ '\n    from ' ~ source ~ '\n    union\n    select' ~ selected ~ '\n    from ' ~ this }}
    {%- else -%}
        {{ 'select distinct' ~ selected ~ '\n    from ' ~ source_changes_relation(source, changes) }}
    {%- endif -%}
{%- endmacro %}
