{#- One row per erasure request (SPEC.md section 7), from the events of its application and the
    purges that followed. -#}
with

applications as (

    select
        tenant_id,
        request_id,
        event,
        requested_ts,
        identities_erased,
        records_erased,
        landing_files,
        at

    from {{ ref('int_erasure_applications') }}

),

removals as (

    select
        tenant_id,
        request_id,
        table_name,
        rows_removed

    from {{ ref('int_erasure_rewrites') }}

),

purges as (

    select purged_at

    from {{ source('erasure_control', 'purge_events') }}

),

applied as (

    select
        tenant_id,
        request_id,
        requested_ts,
        identities_erased,
        records_erased,
        landing_files,
        at as applied_at

    from applications
    where event = 'fixed'

),

repeats as (

    select
        tenant_id,
        request_id,
        count(*) as repeated_lines

    from applications
    where event = 'repeated'
    group by tenant_id, request_id

),

removed_per_table as (

    select
        tenant_id,
        request_id,
        table_name,
        sum(rows_removed) as rows_removed

    from removals
    group by tenant_id, request_id, table_name

),

removed as (

    select
        tenant_id,
        request_id,
        map_from_entries(collect_list(struct(table_name, rows_removed))) as rows_removed

    from removed_per_table
    group by tenant_id, request_id

),

first_purges as (

    select
        applied.tenant_id,
        applied.request_id,
        min(purges.purged_at) as purged_at

    from applied
    inner join purges
        on applied.applied_at <= purges.purged_at
    group by applied.tenant_id, applied.request_id

),

final as (

    select
        ---------- ids
        applied.tenant_id,
        applied.request_id,

        ---------- strings
        applied.landing_files,

        ---------- numbers
        applied.identities_erased,
        applied.records_erased,
        coalesce(repeats.repeated_lines, 0) as repeated_lines,
        coalesce(removed.rows_removed, cast(map() as map<string, bigint>)) as rows_removed,  -- noqa: LT01

        ---------- timestamps
        applied.requested_ts,
        applied.applied_at,
        applied.applied_at
        + make_interval(0, 0, 0, 0, {{ var('erasure_purge_hours') | int }}, 0, 0) as purge_due_at,
        first_purges.purged_at

    from applied
    left join repeats
        on
            applied.tenant_id = repeats.tenant_id
            and applied.request_id = repeats.request_id
    left join removed
        on
            applied.tenant_id = removed.tenant_id
            and applied.request_id = removed.request_id
    left join first_purges
        on
            applied.tenant_id = first_purges.tenant_id
            and applied.request_id = first_purges.request_id

)

select * from final
