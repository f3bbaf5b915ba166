{#- A literal lower bound to put beside batch_watermark. -#}
{% macro batch_watermark_floor(
    source, source_column, column='ingest_batch_id', tenant_column='tenant_id',
    source_tenant_column=none, default=-1
) -%}
    {%- if not (execute and is_incremental()) or skip_unchanged() -%}
        {{ return(default) }}
    {%- endif -%}
    {%- set query = batch_watermark_floor_sql(
        source, this, source_column, column, tenant_column, source_tenant_column, default
    ) -%}
    {{ return(run_query(query).columns[0].values()[0] | int) }}
{%- endmacro %}
