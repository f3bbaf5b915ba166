{% macro run_unless_unchanged(materialization) -%}
    {%- if skip_unchanged() -%}
        {{ return(skipped_node_result()) }}
    {%- endif -%}
    {{ return(context[materialization]()) }}
{%- endmacro %}
