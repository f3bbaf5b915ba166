{#- The incremental models of the project that the run does not select. Their watermarks are
    ingest batch numbers of the landing tables: a full refresh re-stages the landing files
    (new batch numbers from 0) only when this is empty, since a model left out would otherwise
    skip every new batch numbered at or below its watermark. -#}
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
