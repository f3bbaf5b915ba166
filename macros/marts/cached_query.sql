{#- A query run once and kept in memory as a session view. -#}
{% macro cached_query(name, sql) -%}
    {%- set view = 'cached__' ~ this.identifier ~ '__' ~ name -%}
    {%- if execute and not skip_unchanged() -%}
        {#- dropping a cached view uncaches it: the previous run's rows go -#}
        {%- do run_query('drop view if exists ' ~ view) -%}
        {%- do run_query('cache table ' ~ view ~ ' as ' ~ sql) -%}
    {%- endif -%}
    {{ return(view) }}
{%- endmacro %}
