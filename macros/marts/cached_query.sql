{#- Runs `sql` once and keeps its rows in memory as a session view, named after this model and
    `name`: an incremental mart's set of changed keys is read by several of its CTEs, and by
    both the change count and the MERGE, which would otherwise each recompute it. -#}
{% macro cached_query(name, sql) -%}
    {%- set view = 'cached__' ~ this.identifier ~ '__' ~ name -%}
    {%- if execute and not skip_unchanged() -%}
        {#- dropping a cached view uncaches it: the previous run's rows go -#}
        {%- do run_query('drop view if exists ' ~ view) -%}
        {%- do run_query('cache table ' ~ view ~ ' as ' ~ sql) -%}
    {%- endif -%}
    {{ return(view) }}
{%- endmacro %}
