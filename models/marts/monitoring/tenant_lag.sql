{#- Per tenant: how far `records` is behind what has landed. A run re-measures the tenants whose
    batches it counted or staged (`int_tenant_batches`), and tenants added to, changed in or
    removed from the tenants seed: from the tenant's batch rows, and from the record states
    appended since the applied batch the tenant's row keeps (both only grow, so the stored
    newest values and those of the new states make the whole). -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key=['tenant_id'],
        post_hook="{{ record_consumed_versions() }}",
    )
}}

{%- set tenants_to_measure = recompute_keys(
    'tenants_to_measure',
    ['tenant_id'],
    changed_tenants([ref('tenants'), ref('int_tenant_batches'), ref('stg_records__changes')]),
) %}
{#- the states of batches after the lowest applied batch stored: Delta skips older files (a
    table from before applied_batch_id, which the MERGE adds, reads every state once) #}
{%- set applied_after = -1 %}
{%- set reads_stored = is_incremental() and execute and model.resource_type != 'unit_test'
    and 'applied_batch_id' in (adapter.get_columns_in_relation(this) | map(attribute='name') | list) %}
{%- if reads_stored and not skip_unchanged() %}
    {%- set applied_after = run_query(
        'select coalesce(min(coalesce(applied_batch_id, -1)), -1) from ' ~ this
    ).columns[0].values()[0] %}
{%- endif %}

with

tenants_to_measure as (

    {{ tenants_to_measure.body }}

),

tenants as (

    select
        tenant_id,
        max_lag_minutes

    from {{ ref('tenants') }}
    where {{ key_filter(tenants_to_measure, ['tenant_id']) }}

),

batches as (

    select
        tenant_id,
        ingest_batch_id,
        landed_lines,
        newest_accepted_event_ts

    from {{ ref('int_tenant_batches') }}
    where {{ key_filter(tenants_to_measure, ['tenant_id']) }}

),

new_states as (

    select
        tenant_id,
        last_ingest_batch_id,
        event_ts

    from {{ ref('int_record_states') }}
    where
        last_ingest_batch_id > {{ applied_after }}
        and {{ key_filter(tenants_to_measure, ['tenant_id']) }}

),

stored_states as (

    {%- if reads_stored %}

        select
            tenant_id,
            applied_batch_id as last_ingest_batch_id,
            newest_applied_event_ts as event_ts

        from {{ this }}
        where {{ key_filter(tenants_to_measure, ['tenant_id']) }}

    {%- else %}

        select
            tenant_id,
            last_ingest_batch_id,
            event_ts

        from new_states
        where false

    {%- endif %}

),

known_states as (

    select * from new_states
    union all
    select * from stored_states

),

applied_states as (

    select
        tenant_id,
        max(last_ingest_batch_id) as applied_batch_id,
        max(event_ts) as newest_applied_event_ts

    from known_states
    group by tenant_id

),

landed_batches as (

    select
        batches.tenant_id,
        max(batches.newest_accepted_event_ts) as newest_landed_event_ts,
        sum(
            case
                when batches.ingest_batch_id > coalesce(applied_states.applied_batch_id, -1)
                    then batches.landed_lines
                else 0
            end
        ) as staged_lines_not_applied

    from batches
    left join applied_states
        on batches.tenant_id = applied_states.tenant_id
    group by batches.tenant_id

),

final as (

    select
        ---------- ids
        tenants_to_measure.tenant_id,
        applied_states.applied_batch_id,

        ---------- numbers
        coalesce(landed_batches.staged_lines_not_applied, 0) as staged_lines_not_applied,
        (
            unix_seconds(landed_batches.newest_landed_event_ts)
            - unix_seconds(applied_states.newest_applied_event_ts)
        ) / 60.0 as lag_minutes,
        tenants.max_lag_minutes,

        ---------- timestamps
        landed_batches.newest_landed_event_ts,
        applied_states.newest_applied_event_ts,
        current_timestamp() as measured_at,

        ---------- merge control: a tenant gone from the seed leaves
        tenants.tenant_id is null as _delete_row

    from tenants_to_measure
    left join tenants
        on tenants_to_measure.tenant_id = tenants.tenant_id
    left join landed_batches
        on tenants_to_measure.tenant_id = landed_batches.tenant_id
    left join applied_states
        on tenants_to_measure.tenant_id = applied_states.tenant_id

)

{{ merge_rows('final', tenants_to_measure) }}
