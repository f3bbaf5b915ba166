{% materialization table, adapter='profile_lake_spark', supported_languages=['sql', 'python'] -%}
    {{ return(run_unless_unchanged('materialization_table_spark')) }}
{%- endmaterialization %}
