{#-
    Delta liquid clustering: a model's `liquid_clustered_by` config (a column or a list of
    columns) adds `cluster by (...)` to the table dbt-spark creates. dbt-spark 1.11 has no
    such config; its `clustered_cols` clause is Hive bucketing (`clustered_by` + `buckets`),
    and that stays dbt-spark's own code. Delta rejects clustering together with partitioning
    or bucketing, so those combinations fail at compile time, saying what to change. Python
    models get the clause too: their tables are built by the same create_table_as.
-#}
{%- macro profile_lake_spark__clustered_cols(label, required=false) -%}
  {%- set liquid_columns = config.get('liquid_clustered_by', validator=validation.any[list, basestring]) -%}
  {%- if not liquid_columns -%}
    {{ return(spark__clustered_cols(label, required)) }}
  {%- endif -%}
  {%- set liquid_columns = [liquid_columns] if liquid_columns is string else liquid_columns -%}
  {%- set file_format = config.get('file_format', 'parquet') -%}
  {%- if file_format != 'delta' -%}
    {{ exceptions.raise_compiler_error(
      "liquid_clustered_by needs file_format 'delta' (got '" ~ file_format ~ "') in model " ~ model.name ~ "."
    ) }}
  {%- endif -%}
  {%- if config.get('partition_by') -%}
    {{ exceptions.raise_compiler_error(
      "Model " ~ model.name ~ " sets both liquid_clustered_by and partition_by: Delta liquid clustering "
      ~ "replaces partitioning, so drop partition_by (or liquid_clustered_by)."
    ) }}
  {%- endif -%}
  {%- if config.get('clustered_by') -%}
    {{ exceptions.raise_compiler_error(
      "Model " ~ model.name ~ " sets both liquid_clustered_by and clustered_by (Hive bucketing): "
      ~ "Delta tables cannot be bucketed, so drop clustered_by."
    ) }}
  {%- endif %}
    cluster by ({{ liquid_columns | join(', ') }})
{%- endmacro -%}
