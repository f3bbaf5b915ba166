{#- Per tenant: how far `records` is behind what has landed. Rebuilt every run. -#}

with

tenants as (

    select
        tenant_id,
        max_lag_minutes

    from {{ ref('tenants') }}

),

landed_changes as (

    select
        tenant_id,
        max(event_ts) as newest_landed_event_ts

    from {{ ref('stg_records__changes') }}
    where is_accepted
    group by tenant_id

),

record_states as (

    select
        tenant_id,
        max(event_ts) as newest_applied_event_ts

    from {{ ref('int_record_states') }}
    group by tenant_id

),

applied_watermarks as (

    select
        tenant_id,
        max(last_ingest_batch_id) as applied_batch_id

    from {{ ref('int_record_states') }}
    group by tenant_id

),

staged_lines as (

    select
        landed_lines.tenant_id,
        count(*) as staged_lines_not_applied

    from {{ source('landing', 'records') }} as landed_lines
    left join applied_watermarks
        on landed_lines.tenant_id = applied_watermarks.tenant_id
    where landed_lines.ingest_batch_id > coalesce(applied_watermarks.applied_batch_id, -1)
    group by landed_lines.tenant_id

),

final as (

    select
        ---------- ids
        tenants.tenant_id,

        ---------- numbers
        coalesce(staged_lines.staged_lines_not_applied, 0) as staged_lines_not_applied,
        (
            unix_seconds(landed_changes.newest_landed_event_ts)
            - unix_seconds(record_states.newest_applied_event_ts)
        ) / 60.0 as lag_minutes,
        tenants.max_lag_minutes,

        ---------- timestamps
        landed_changes.newest_landed_event_ts,
        record_states.newest_applied_event_ts,
        current_timestamp() as measured_at

    from tenants
    left join landed_changes
        on tenants.tenant_id = landed_changes.tenant_id
    left join record_states
        on tenants.tenant_id = record_states.tenant_id
    left join staged_lines
        on tenants.tenant_id = staged_lines.tenant_id

)

select * from final
