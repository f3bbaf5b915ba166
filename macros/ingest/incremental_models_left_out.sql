{#- The incremental models of the project that the run does not select. -#}
{% macro incremental_models_left_out() -%}
    {%- set left_out = [] -%}
    {%- for node in graph.nodes.values()
        if node.resource_type == 'model'
        and node.package_name == project_name
        and node.config.materialized == 'incremental'
        and node.unique_id not in selected_resources -%}
        {%- do left_out.append(node.name) -%}
    {%- endfor -%}
    {{ return(left_out | sort) }}
{%- endmacro %}
