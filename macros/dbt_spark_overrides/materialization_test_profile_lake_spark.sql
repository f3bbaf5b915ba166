{% materialization test, adapter='profile_lake_spark' -%}
    {%- if skip_unchanged() -%}
        {{ return(skipped_node_result()) }}
    {%- endif -%}
    {{ return(context['materialization_test_default']()) }}
{%- endmaterialization %}
