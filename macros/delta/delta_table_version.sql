{#- The latest version of a Delta table (-1 when it does not exist yet; 0 while parsing). -#}
{% macro delta_table_version(relation) -%}
    {%- if not execute -%}
        {{ return(0) }}
    {%- endif -%}
    {%- set existing = adapter.get_relation(relation.database, relation.schema, relation.identifier) -%}
    {%- if existing is none -%}
        {{ return(-1) }}
    {%- endif -%}
    {%- set history = run_query('describe history ' ~ relation ~ ' limit 1') -%}
    {{ return(history.columns['version'].values()[0] | int) }}
{%- endmacro %}
