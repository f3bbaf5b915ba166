{#- The latest commit of a Delta table: {version, timestamp}. -#}
{% macro delta_latest_commit(relation) -%}
    {%- set none_yet = {'version': -1, 'timestamp': '1970-01-01 00:00:00'} -%}
    {%- if not execute -%}
        {{ return({'version': 0, 'timestamp': none_yet.timestamp}) }}
    {%- endif -%}
    {%- if skip_unchanged() or adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
        {{ return(none_yet) }}
    {%- endif -%}
    {{ return(adapter.delta_latest_commit(relation)) }}
{%- endmacro %}
