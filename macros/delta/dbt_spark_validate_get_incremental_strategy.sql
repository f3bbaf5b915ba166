{#- dbt-spark's strategy validation, accepting `merge_with_deletes` (Delta only). -#}
{% macro dbt_spark_validate_get_incremental_strategy(raw_strategy, file_format) -%}
    {%- if raw_strategy == 'merge_with_deletes' -%}
        {%- if file_format != 'delta' -%}
            {{ exceptions.raise_compiler_error(
                "incremental_strategy merge_with_deletes needs file_format 'delta' (got '" ~ file_format ~ "')."
            ) }}
        {%- endif -%}
        {{ return(raw_strategy) }}
    {%- endif -%}
    {{ return(dbt.dbt_spark_validate_get_incremental_strategy(raw_strategy, file_format)) }}
{%- endmacro %}
