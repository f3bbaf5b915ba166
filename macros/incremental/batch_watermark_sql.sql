{% macro batch_watermark_sql(relation, column='ingest_batch_id', condition=none, tenant_column='tenant_id', row_tenant_column=none, default=-1) -%}
    coalesce(
        (
            select
                map_from_entries(
                    collect_list(struct(watermarks.watermark_tenant, watermarks.watermark))
                ) as watermark_by_tenant
            from (
                select
                    coalesce({{ tenant_column }}, '') as watermark_tenant,
                    max({{ column }}) as watermark
                from {{ relation }}
                {%- if condition %}
                    where {{ condition }}
                {%- endif %}
                group by coalesce({{ tenant_column }}, '')
            ) as watermarks
        )[coalesce({{ row_tenant_column or tenant_column }}, '')],
        {{ default }}
    )
{%- endmacro %}
