{#- Per tenant: how far `records` is behind what has landed. Incremental runs re-measure the
    tenants with lines staged or landed since the last run, and tenants added to, changed in or
    removed from the tenants seed. -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key=['tenant_id'],
        post_hook="{{ record_consumed_versions() }}",
    )
}}

{%- set staged_changes = source_changes(ref('stg_records__changes')) %}
{%- set landed_through = none %}
{%- set read_landing = execute and model.resource_type != 'unit_test' and not skip_unchanged() %}
{%- if read_landing and load_relation(source('landing', 'records')) is not none %}
    {%- set landed_through = run_query(
        'select coalesce(max(ingest_batch_id), -1) from ' ~ source('landing', 'records')
    ).columns[0].values()[0] %}
{%- endif %}
{%- set measured_through = swap_stamp('landed_batch', landed_through) %}
{%- set measure_every_tenant = staged_changes.kind == 'all' or measured_through is none %}
{#- the tenants to measure: every tenant, or those with lines staged or landed since the last
    run, and those added to, changed in or removed from the seed #}
{%- set every_tenant = 'true' if measure_every_tenant or not is_incremental() else 'false' %}
{#- measuring every tenant, the feed and the landing add none (their part reads nothing) #}
{%- set landed_after = 'null' if measure_every_tenant else measured_through %}
{%- set touched_tenants_sql -%}
select tenant_id
    from {{ ref('tenants') }}
    where {{ every_tenant }}
    {%- if is_incremental() %}

        union

        select configured.tenant_id
        from {{ ref('tenants') }} as configured
        left join {{ this }} as measured
            on configured.tenant_id = measured.tenant_id
        where not configured.max_lag_minutes <=> measured.max_lag_minutes

        union

        select tenant_id from {{ this }}
        where {{ every_tenant }} or tenant_id not in (select tenant_id from {{ ref('tenants') }})

        union

        select tenant_id from {{ source_changes_relation(ref('stg_records__changes'), staged_changes) }}

        union

        select tenant_id from {{ source('landing', 'records') }}
        where ingest_batch_id > {{ landed_after }}
    {%- endif %}
{%- endset %}
{%- set touched_tenants = recompute_keys(
    'touched_tenants', ['tenant_id'], touched_tenants_sql, every=measure_every_tenant
) %}

with

touched_tenants as (

    {{ touched_tenants.body }}

),

tenants as (

    select
        tenant_id,
        max_lag_minutes

    from {{ ref('tenants') }}
    where {{ key_filter(touched_tenants, ['tenant_id']) }}

),

landed_changes as (

    select
        tenant_id,
        max(event_ts) as newest_landed_event_ts

    from {{ ref('stg_records__changes') }}
    where
        is_accepted
        and {{ key_filter(touched_tenants, ['tenant_id']) }}
    group by tenant_id

),

record_states as (

    select
        tenant_id,
        max(event_ts) as newest_applied_event_ts

    from {{ ref('int_record_states') }}
    where {{ key_filter(touched_tenants, ['tenant_id']) }}
    group by tenant_id

),

applied_watermarks as (

    select
        tenant_id,
        max(last_ingest_batch_id) as applied_batch_id

    from {{ ref('int_record_states') }}
    where {{ key_filter(touched_tenants, ['tenant_id']) }}
    group by tenant_id

),

staged_lines as (

    select
        landed_lines.tenant_id,
        count(*) as staged_lines_not_applied

    from {{ source('landing', 'records') }} as landed_lines
    left join applied_watermarks
        on landed_lines.tenant_id = applied_watermarks.tenant_id
    where
        landed_lines.ingest_batch_id > coalesce(applied_watermarks.applied_batch_id, -1)
        and {{ key_filter(touched_tenants, ['landed_lines.tenant_id']) }}
    group by landed_lines.tenant_id

),

final as (

    select
        ---------- ids
        touched_tenants.tenant_id,

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
        current_timestamp() as measured_at,

        ---------- merge control: a tenant gone from the seed leaves
        tenants.tenant_id is null as _delete_row

    from touched_tenants
    left join tenants
        on touched_tenants.tenant_id = tenants.tenant_id
    left join landed_changes
        on touched_tenants.tenant_id = landed_changes.tenant_id
    left join record_states
        on touched_tenants.tenant_id = record_states.tenant_id
    left join staged_lines
        on touched_tenants.tenant_id = staged_lines.tenant_id

)

{{ merge_rows('final', touched_tenants) }}
