{#- run-operation: OPTIMIZE every table laid out by key, as optimize_table does one. -#}
{% macro optimize_layouts() -%}
    {%- set models = graph.nodes.values() | selectattr('resource_type', 'equalto', 'model') | sort(attribute='name') -%}
    {%- for node in models if node.config.get('zorder_by') or node.config.get('liquid_clustered_by') -%}
        {%- if load_relation(ref(node.name)) is none -%}
            {{ log(node.name ~ ' not built yet: nothing to optimize', info=true) }}
        {%- else -%}
            {%- do optimize_table(node.name) -%}
        {%- endif -%}
    {%- endfor -%}
{%- endmacro %}
