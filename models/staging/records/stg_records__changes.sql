{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        tblproperties={
            'delta.dataSkippingStatsColumns': 'ingest_batch_id,tenant_id,record_id,event_ts,seq',
        },
    )
}}

{%- set fields = landing_fields(model) %}

with

landed_lines as (

    select
        ingest_batch_id,
        source_file,
        line_number,
        tenant_id as staged_tenant_id,
        is_valid_utf8,
        line,
        ingested_at

    from {{ source('records', 'landed_lines') }}
    where
        {{ in_run_tenant_scope('tenant_id') }}
        and ingest_batch_id > {{ batch_watermark(tenant_column='staged_tenant_id', row_tenant_column='tenant_id') }}

),

{{ landing_checks(fields) }},

final as (

    select
        ---------- ids
        ingest_batch_id,
        coalesce(tenant_id, staged_tenant_id) as tenant_id,
        staged_tenant_id,
        record_id,
        primary_id,

        ---------- strings
        source_file,
        op,
        record_type,
        related_ids,
        payload,
        case when size(problems) > 0 then line end as line,
        problems,

        ---------- numbers
        line_number,
        seq,

        ---------- booleans
        size(problems) = 0 as is_accepted,

        ---------- timestamps
        event_ts,
        ingested_at

    from judged

)

select * from final
