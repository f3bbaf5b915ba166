{#- The versions of a Delta table that created or replaced it (profile_lake.change_feed). -#}
{% macro delta_table_creations(relation, history=none) -%}
    {%- if history is none -%}
        {%- if not execute
            or adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
            {{ return([]) }}
        {%- endif -%}
        {%- set history = run_query('describe history ' ~ relation) -%}
    {%- endif -%}
    {{ return(adapter.delta_table_creations(history)) }}
{%- endmacro %}
