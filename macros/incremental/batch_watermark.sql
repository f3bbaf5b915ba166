{% macro batch_watermark(column='ingest_batch_id', condition=none, tenant_column='tenant_id', row_tenant_column=none, default=-1) -%}
    {%- if is_incremental() -%}
        coalesce(
            (
                select map_from_entries(collect_list(struct(watermark_tenant, watermark)))
                from (
                    select
                        coalesce({{ tenant_column }}, '') as watermark_tenant,
                        max({{ column }}) as watermark
                    from {{ this }}
                    {%- if condition %}
                        where {{ condition }}
                    {%- endif %}
                    group by coalesce({{ tenant_column }}, '')
                )
            )[coalesce({{ row_tenant_column or tenant_column }}, '')],
            {{ default }}
        )
    {%- else -%}
        {{ default }}
    {%- endif -%}
{%- endmacro %}
