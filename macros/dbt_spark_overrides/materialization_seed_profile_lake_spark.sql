{% materialization seed, adapter='profile_lake_spark' -%}
    {{ return(run_unless_unchanged('materialization_seed_default')) }}
{%- endmaterialization %}
