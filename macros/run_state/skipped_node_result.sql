{% macro skipped_node_result() -%}
    {%- set reason = adapter.node_plan(model, graph, var('full_checks', false))['reason'] -%}
    {%- set table = adapter.skipped_node_table(model.resource_type) -%}
    {%- if model.resource_type == 'seed' -%}
        {%- do store_result('agate_table', response='OK', agate_table=table) -%}
    {%- endif -%}
    {%- call noop_statement('main', reason, 'SKIP', 0, res=table) -%}
    {%- endcall -%}
    {{ return({'relations': [] if model.resource_type in ['test', 'unit_test'] else [this]}) }}
{%- endmacro %}
