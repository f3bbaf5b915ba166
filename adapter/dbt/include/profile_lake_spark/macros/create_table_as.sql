{#-
    Python models run in the same SparkSession as SQL (see python_submissions.py), so the
    model's DataFrame is handed over as a temporary view and the table is built by dbt-spark's
    own SQL `create_table_as`: partitioning, table properties, clustering, location and comments
    apply to Python models exactly as they do to SQL models. An incremental run's rows (a
    temporary relation named without a schema, as the project's incremental materialization
    names it) are computed once and stay a session view, as a SQL model's are a temporary view.
-#}
{%- macro profile_lake_spark__create_table_as(temporary, relation, compiled_code, language='sql') -%}
  {%- if language == 'sql' -%}
    {{ spark__create_table_as(temporary, relation, compiled_code, language) }}
  {%- else -%}
    {%- set handoff_view = relation.identifier ~ '__dbt_python_output' -%}
    {#- the project's incremental materialization names its temporary relation without a schema,
        as for SQL; dbt-spark's own expects a real table it can drop later -#}
    {%- set as_session_view = temporary and not relation.include_policy.schema -%}
    {%- if temporary and not as_session_view -%}
      {%- set build_sql -%}
        create or replace table {{ relation }} using {{ config.get('file_format', 'delta') }}
        as select * from {{ handoff_view }}
      {%- endset -%}
    {%- elif not temporary -%}
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
    {%- if as_session_view %}
# An incremental run's rows: computed once into the session's blocks (a local checkpoint, as
# Delta's MERGE keeps its source), then a session view the MERGE or append, its count and the
# contract checks read; the materialization drops it. A Delta table written and dropped again
# would cost a commit, statistics and a metastore entry, and a cached view would list the
# model's Delta files again at every read. (On a cluster, an executor lost before the write
# fails the run; the next run repeats it.)
df = df.localCheckpoint()
df.createOrReplaceTempView({{ tojson(relation.identifier) }})
    {%- else %}
df.createOrReplaceTempView({{ tojson(handoff_view) }})
try:
    spark.sql({{ tojson(build_sql) }})
finally:
    spark.catalog.dropTempView({{ tojson(handoff_view) }})
    {%- endif %}
  {%- endif -%}
{%- endmacro -%}
