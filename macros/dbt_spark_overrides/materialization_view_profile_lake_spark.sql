{% materialization view, adapter='profile_lake_spark' -%}
    {{ return(run_unless_unchanged('materialization_view_spark')) }}
{%- endmaterialization %}
