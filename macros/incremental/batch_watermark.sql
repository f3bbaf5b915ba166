{#- The newest ingest batch an incremental model already holds for the tenant of each row (-1
    for a tenant it has not seen, and on a first run), so `where ingest_batch_id >
    {{ batch_watermark() }}` reads only each tenant's new batches. Watermarks are per tenant
    because runs scoped to other tenants (var `tenants`) advance the same tables independently.
    The watermark is the model's own data, so it moves in the same Delta commit as the rows.
    `tenant_column` names the tenant column of the model, `row_tenant_column` that of the rows
    being filtered (the same by default); `default` is the watermark of an unseen tenant. -#}
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
