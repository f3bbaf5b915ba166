{% macro batch_watermark_floor_sql(
    source, relation, source_column, column='ingest_batch_id', tenant_column='tenant_id',
    source_tenant_column=none, default=-1
) -%}
    with

    sources as (
        select
            coalesce({{ source_tenant_column or tenant_column }}, '') as tenant,
            max({{ source_column }}) as newest
        from {{ source }}
        group by coalesce({{ source_tenant_column or tenant_column }}, '')
    ),

    watermarks as (
        select
            coalesce({{ tenant_column }}, '') as tenant,
            max({{ column }}) as watermark
        from {{ relation }}
        group by coalesce({{ tenant_column }}, '')
    )

    select
        coalesce(
            min(
                case
                    when sources.newest > coalesce(watermarks.watermark, {{ default }})
                        then coalesce(watermarks.watermark, {{ default }})
                end
            ),
            max(sources.newest),
            {{ default }}
        ) as watermark_floor
    from sources
    left join watermarks
        on sources.tenant = watermarks.tenant
{%- endmacro %}
