{{ config(materialized='view') }}

{#- One row per dbt invocation on the lake: its latest event (`ended` over `killed` over
    `started`, the rank profile_lake.run_history defines for this view and the report). A
    view, so it shows the current run too once on-run-end has written it. -#}

with

run_events as (

    select
        run_id,
        event,
        command,
        target_name,
        tenants,
        host,
        pid,
        status,
        message,
        files_ingested,
        lines_landed,
        lines_accepted,
        lines_quarantined,
        lag_minutes,
        nodes_run,
        nodes_failed,
        seconds,
        started_at,
        ended_at,
        event_at

    from {{ source('run_log', 'run_events') }}

),

ranked as (

    select
        *,
        row_number() over (
            partition by run_id
            order by {{ adapter.run_event_rank_sql('event') }} desc
        ) as event_rank

    from run_events

),

final as (

    select
        ---------- ids
        run_id,

        ---------- strings
        command,
        target_name,
        tenants,
        status,
        message,
        host,

        ---------- numbers
        pid,
        files_ingested,
        lines_landed,
        lines_accepted,
        lines_quarantined,
        lag_minutes,
        nodes_run,
        nodes_failed,
        seconds,

        ---------- timestamps
        started_at,
        ended_at,
        event_at as status_at

    from ranked
    where event_rank = 1

)

select * from final
