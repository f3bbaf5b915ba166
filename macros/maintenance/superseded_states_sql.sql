{% macro superseded_states_sql(relation, tenants=none, notifications=none, graph=none) -%}
    select
        tenant_id,
        record_id,
        last_ingest_batch_id
    from (
        select
            tenant_id,
            record_id,
            last_ingest_batch_id,
            max(last_ingest_batch_id) over (partition by tenant_id, record_id) as newest_batch_id
        from {{ relation }}
        {%- if tenants %}
            where tenant_id in ({% for tenant in tenants %}{{ sql_string_literal(tenant) }}{{ ', ' if not loop.last }}{% endfor %})
        {%- endif %}
    ) as versions
    where
        last_ingest_batch_id < newest_batch_id
        {%- if notifications is not none %}
            {#- a version not yet notified stays: the next notification starts from it #}
            and last_ingest_batch_id <= {{ batch_watermark_sql(notifications, row_tenant_column='versions.tenant_id') }}
        {%- endif %}
        {%- if graph is not none %}
            {#- nor one the identity graph has not read past: it reads what each version replaced #}
            and last_ingest_batch_id <= {{ batch_watermark_sql(graph, column='records_batch_id', row_tenant_column='versions.tenant_id') }}
        {%- endif %}
{%- endmacro %}
