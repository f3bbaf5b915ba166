{% materialization snapshot, adapter='profile_lake_spark' -%}
    {{ return(run_unless_unchanged('materialization_snapshot_spark')) }}
{%- endmaterialization %}
