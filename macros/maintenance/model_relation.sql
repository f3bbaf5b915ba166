{#- The relation of the project's model `name`, from the graph rather than ref(): a hook may
    need a model's table only on some runs, and dbt refuses a ref() it cannot see at parse
    time. None for a model the project does not have. -#}
{% macro model_relation(name) -%}
    {%- set nodes = graph.nodes.values() | selectattr('resource_type', 'equalto', 'model')
        | selectattr('package_name', 'equalto', project_name)
        | selectattr('name', 'equalto', name) | list -%}
    {%- if not nodes -%}
        {{ return(none) }}
    {%- endif -%}
    {{ return(api.Relation.create(
        database=nodes[0].database, schema=nodes[0].schema, identifier=nodes[0].alias, type='table'
    )) }}
{%- endmacro %}
