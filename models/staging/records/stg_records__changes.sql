{#- Change feed on: the monitoring marts read the lines each run staged, and those an erasure
    rewrote (int_erasure_rewrites); a feed of appended files costs nothing to write. -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        tblproperties={
            'delta.dataSkippingStatsColumns': 'ingest_batch_id,tenant_id,record_id,event_ts,seq',
            'delta.enableChangeDataFeed': 'true',
        },
    )
}}

with

{{ landing_checks(landing_fields(model), source('landing', 'records')) }},

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
        size(problems) = 0 and not is_erased as is_accepted,
        is_erased,

        ---------- timestamps
        event_ts,
        ingested_at

    from judged

)

select * from final
