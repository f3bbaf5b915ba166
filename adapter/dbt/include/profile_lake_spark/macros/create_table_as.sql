{#-
    Python models run in the same SparkSession as SQL (see python_submissions.py), so the
    model's DataFrame is handed over as a temporary view and the table is built by dbt-spark's
    own SQL `create_table_as`: partitioning, table properties, clustering, location and comments
    apply to Python models exactly as they do to SQL models.
-#}
{%- macro profile_lake_spark__create_table_as(temporary, relation, compiled_code, language='sql') -%}
  {%- if language == 'sql' -%}
    {{ spark__create_table_as(temporary, relation, compiled_code, language) }}
  {%- else -%}
    {%- set handoff_view = relation.identifier ~ '__dbt_python_output' -%}
    {%- if temporary -%}
      {#- dbt-spark's incremental materialization expects a real table it can drop later -#}
      {%- set build_sql -%}
        create or replace table {{ relation }} using {{ config.get('file_format', 'delta') }}
        as select * from {{ handoff_view }}
      {%- endset -%}
    {%- else -%}
      {%- set build_sql = spark__create_table_as(False, relation, 'select * from ' ~ handoff_view, 'sql') -%}
    {%- endif -%}
{{ compiled_code }}
# --- dbt materialization (profile_lake_spark): hand the DataFrame to SQL --- #
dbt = dbtObj(spark.table)
df = model(dbt, spark)
if not isinstance(df, pyspark_sql_DataFrame):
    if type(df).__module__.startswith("pandas"):
        df = spark.createDataFrame(df)
    else:
        raise TypeError(f"{type(df)} is not a supported type for a dbt Python model")
df.createOrReplaceTempView({{ tojson(handoff_view) }})
try:
    spark.sql({{ tojson(build_sql) }})
finally:
    spark.catalog.dropTempView({{ tojson(handoff_view) }})
  {%- endif -%}
{%- endmacro -%}
