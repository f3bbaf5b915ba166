{% macro skip_unchanged() -%}
    {%- if not execute or model is not defined or model.resource_type not in ['model', 'seed', 'snapshot', 'test', 'unit_test'] -%}
        {{ return(false) }}
    {%- endif -%}
    {{ return(adapter.node_plan(model, graph, var('full_checks', false))['skip']) }}
{%- endmacro %}
