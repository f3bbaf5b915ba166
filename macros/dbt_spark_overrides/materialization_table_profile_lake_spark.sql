{% materialization table, adapter='profile_lake_spark', supported_languages=['sql', 'python'] -%}
    {%- if skip_unchanged() -%}
        {{ return(skipped_node_result()) }}
    {%- endif -%}
    {{ return(context['materialization_table_spark']()) }}
{%- endmaterialization %}
