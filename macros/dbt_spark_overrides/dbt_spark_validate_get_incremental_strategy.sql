{% macro dbt_spark_validate_get_incremental_strategy(raw_strategy, file_format) -%}
    {%- if raw_strategy in ('merge_with_deletes', 'append_new_rows') -%}
        {%- if file_format != 'delta' -%}
            {{ exceptions.raise_compiler_error(
                "incremental_strategy " ~ raw_strategy ~ " needs file_format 'delta' (got '" ~ file_format ~ "')."
            ) }}
        {%- endif -%}
        {{ return(raw_strategy) }}
    {%- endif -%}
    {{ return(dbt.dbt_spark_validate_get_incremental_strategy(raw_strategy, file_format)) }}
{%- endmacro %}
