{#- dbt-spark's strategy switch, extended with `merge_with_deletes` and `append_new_rows`. -#}
{% macro dbt_spark_get_incremental_sql(strategy, source, target, existing, unique_key, incremental_predicates) -%}
    {%- if strategy == 'merge_with_deletes' -%}
        {{ get_incremental_merge_with_deletes_sql({
            'target_relation': target,
            'temp_relation': source,
            'unique_key': unique_key,
            'incremental_predicates': incremental_predicates,
        }) }}
    {%- elif strategy == 'append_new_rows' -%}
        {{ get_incremental_append_new_rows_sql({'target_relation': target, 'temp_relation': source}) }}
    {%- else -%}
        {{ dbt.dbt_spark_get_incremental_sql(strategy, source, target, existing, unique_key, incremental_predicates) }}
    {%- endif -%}
{%- endmacro %}
