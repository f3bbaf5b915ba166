{#- A literal lower bound to put beside batch_watermark. -#}
{% macro batch_watermark_floor(
    source, source_column, column='ingest_batch_id', tenant_column='tenant_id',
    source_tenant_column=none, default=-1
) -%}
    {%- if not (execute and is_incremental()) -%}
        {{ return(default) }}
    {%- endif -%}
    {%- set query -%}
        select coalesce(
            min(
                case
                    when sources.newest > coalesce(watermarks.watermark, {{ default }})
                        then coalesce(watermarks.watermark, {{ default }})
                end
            ),
            max(sources.newest),
            {{ default }}
        ) as watermark_floor
        from (
            select
                coalesce({{ source_tenant_column or tenant_column }}, '') as tenant,
                max({{ source_column }}) as newest
            from {{ source }}
            group by coalesce({{ source_tenant_column or tenant_column }}, '')
        ) as sources
        left join (
            select
                coalesce({{ tenant_column }}, '') as tenant,
                max({{ column }}) as watermark
            from {{ this }}
            group by coalesce({{ tenant_column }}, '')
        ) as watermarks
            on sources.tenant = watermarks.tenant
    {%- endset -%}
    {{ return(run_query(query).columns[0].values()[0] | int) }}
{%- endmacro %}
