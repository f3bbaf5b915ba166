{% materialization unit, adapter='profile_lake_spark' -%}
    {{ return(run_unless_unchanged('materialization_unit_default')) }}
{%- endmaterialization %}
