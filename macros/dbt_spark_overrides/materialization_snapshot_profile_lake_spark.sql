{% materialization snapshot, adapter='profile_lake_spark' -%}
    {%- if skip_unchanged() -%}
        {{ return(skipped_node_result()) }}
    {%- endif -%}
    {{ return(context['materialization_snapshot_spark']()) }}
{%- endmaterialization %}
