{#- How this run brings the mart up to date: `keys` or `whole` (profile_lake.techniques). -#}
{% macro mart_technique() -%}
    {{ return(adapter.node_technique(model, graph, var('mart_technique', 'auto'))) }}
{%- endmacro %}
