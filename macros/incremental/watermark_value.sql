{#- batch_watermark() as a number, for SQL that needs a literal (-1 on a first run or while
    parsing). -#}
{% macro watermark_value(column='ingest_batch_id', condition=none) -%}
    {%- if not execute or not is_incremental() -%}
        {{ return(-1) }}
    {%- endif -%}
    {%- set found = run_query('select ' ~ batch_watermark(column, condition)) -%}
    {{ return(found.columns[0].values()[0] | int) }}
{%- endmacro %}
