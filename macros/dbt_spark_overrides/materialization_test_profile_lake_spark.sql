{% materialization test, adapter='profile_lake_spark' -%}
    {{ return(run_unless_unchanged('materialization_test_default')) }}
{%- endmaterialization %}
