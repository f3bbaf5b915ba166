{#- The keys of this mart's rows among a run's keys to recompute (none on a full build). -#}
{% macro stored_keys(keys, columns) -%}
    {#- one target on the select's line, several on lines of their own (sqlfluff LT09) -#}
    {%- set selected = ' ' ~ columns[0] if columns | length == 1 else '\n        ' ~ columns | join(',\n        ') -%}
    {%- if is_incremental() -%}
        {{ 'select' ~ selected ~ '\n    from ' ~ this ~ '\n    where ' ~ key_filter(keys, keys.columns) }}
    {%- else -%}
        {%- set nulls = [] -%}
        {%- for column in columns -%}
            {%- do nulls.append('cast(null as string) as ' ~ column) -%}
        {%- endfor -%}
        {{ 'select\n        ' ~ nulls | join(',\n        ') ~ '\n    where false' }}
    {%- endif -%}
{%- endmacro %}
