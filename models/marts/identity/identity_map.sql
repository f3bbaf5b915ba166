{#- The change data feed is read by int_profile_identities_resolved: a changed row's before
    image gives the canonical identity the row had, whose profile may split. Lines are read
    through the erased set (SPEC.md section 7); int_erasure_applications, which runs first,
    deletes the rows of the identities a request erases. -#}
-- depends_on: {{ ref('int_erasure_applications') }}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key=['tenant_id', 'identity_id'],
        partition_by=['tenant_id'],
        zorder_by=['identity_id'],
        tblproperties={
            'delta.enableChangeDataFeed': 'true',
            'delta.dataSkippingStatsColumns': 'identity_id,canonical_id,ingest_batch_id',
        },
    )
}}

with

erased_sets as (

    {{ erased_sets() }}  -- noqa: LT09, LT14, RF04

),

record_changes as (

    select
        record_lines.tenant_id,
        record_lines.ingest_batch_id,
        array_union(
            array(record_lines.primary_id),
            coalesce({{ adapter.erasure_filter_sql('related_ids_kept', 'record_lines.related_ids') }}, array())
        ) as seen_ids

    from {{ ref('stg_records__changes') }} as record_lines
    left join erased_sets
        on record_lines.tenant_id = erased_sets.tenant_id
    where
        record_lines.is_accepted
        and {{ in_run_tenant_scope('record_lines.tenant_id') }}
        and record_lines.ingest_batch_id > {{ batch_watermark(row_tenant_column='record_lines.tenant_id') }}
        and not {{ adapter.erasure_filter_sql('line_erased', 'record_lines.record_id', 'record_lines.primary_id') }}

),

renamed_identities as (

    select
        tenant_id,
        identity_id,
        canonical_id,
        ingest_batch_id

    from {{ ref('int_identities_renamed') }}

),

record_identities as (

    select
        tenant_id,
        explode(seen_ids) as identity_id,
        ingest_batch_id

    from record_changes

),

rename_changes as (

    select
        tenant_id,
        identity_id,
        ingest_batch_id

    from renamed_identities
    where
        {{ in_run_tenant_scope('tenant_id') }}
        and ingest_batch_id > {{ batch_watermark() }}

),

seen_identities as (

    select
        tenant_id,
        identity_id,
        ingest_batch_id

    from record_identities

    union all

    select
        tenant_id,
        identity_id,
        ingest_batch_id

    from rename_changes

),

touched_identities as (

    select
        tenant_id,
        identity_id,
        max(ingest_batch_id) as ingest_batch_id

    from seen_identities
    group by tenant_id, identity_id

),

final as (

    select
        ---------- ids
        touched_identities.tenant_id,
        touched_identities.identity_id,
        coalesce(renamed_identities.canonical_id, touched_identities.identity_id) as canonical_id,

        ---------- numbers
        touched_identities.ingest_batch_id,

        ---------- booleans
        coalesce(renamed_identities.canonical_id, touched_identities.identity_id)
        = touched_identities.identity_id as is_canonical

    from touched_identities
    left join renamed_identities
        on
            touched_identities.tenant_id = renamed_identities.tenant_id
            and touched_identities.identity_id = renamed_identities.identity_id

)

select * from final
