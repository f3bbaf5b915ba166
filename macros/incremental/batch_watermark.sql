{% macro batch_watermark(column='ingest_batch_id', condition=none, tenant_column='tenant_id', row_tenant_column=none, default=-1) -%}
    {%- if is_incremental() -%}
        {{ batch_watermark_sql(this, column, condition, tenant_column, row_tenant_column, default) }}
    {%- else -%}
        {{ default }}
    {%- endif -%}
{%- endmacro %}
