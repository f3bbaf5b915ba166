{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        partition_by=['tenant_id', 'change_date'],
        tblproperties={
            'delta.appendOnly': 'true',
            'delta.dataSkippingStatsColumns': 'record_id,records_version,ingest_batch_id,changed_at',
        },
    )
}}

{#- The changes of `records` come from the run's own change set: one row per version that
    int_record_states appended past the tenant's watermark (the newest ingest_batch_id notified
    to it), the versions the records MERGE applies. The rows and the watermark land in one
    commit, so a run killed at any point and run again notifies each change once
    (docs/notifications.md). records_version and changed_at: the version of records read,
    which holds the changes. -#}
{%- set records_commit = delta_latest_commit(ref('records')) %}

with

record_versions as (

    select
        tenant_id,
        record_id,
        is_deleted,
        prior_is_live,
        change_reason,
        last_ingest_batch_id,
        max(last_ingest_batch_id) over (partition by tenant_id, record_id) as newest_batch_id

    from {{ ref('int_record_states') }}
    where
        {{ in_run_tenant_scope('tenant_id') }}
        -- a version that leaves the record as it was is no change to notify
        and coalesce(changes_record, true)
        and last_ingest_batch_id > {{ batch_watermark(row_tenant_column='tenant_id') }}
        {# the same bound as a literal: Delta skips the files of versions already notified #}
        and last_ingest_batch_id > {{ batch_watermark_floor(ref('int_record_states'), 'last_ingest_batch_id') }}

),

live_records as (

    select
        tenant_id,
        record_id,
        ingest_batch_id

    from {{ ref('records') }}
    where {{ in_run_tenant_scope('tenant_id') }}

),

unapplied_tenants as (

    {#- a tenant whose newest versions records does not show yet (a run stopped before its
        MERGE) waits for the next run, whose MERGE applies all of them in one commit -#}
    select distinct record_versions.tenant_id

    from record_versions
    left join live_records
        on
            record_versions.tenant_id = live_records.tenant_id
            and record_versions.record_id = live_records.record_id
    where
        record_versions.last_ingest_batch_id = record_versions.newest_batch_id
        and (
            (record_versions.is_deleted and live_records.record_id is not null)
            or (
                not record_versions.is_deleted
                and coalesce(live_records.ingest_batch_id, -1) != record_versions.last_ingest_batch_id
            )
        )

),

record_changes as (

    {#- each version changes the record from what it was before (a version written before
        prior_is_live existed: live); a first build starts from nothing, with each record's
        newest version -#}
    select
        record_versions.tenant_id,
        record_versions.record_id,
        case
            {% if is_incremental() -%}
                when not record_versions.is_deleted and coalesce(record_versions.prior_is_live, true)
                    then 'update'
                when not record_versions.is_deleted then 'insert'
                when coalesce(record_versions.prior_is_live, true) then 'delete'
            {%- else -%}
                when not record_versions.is_deleted then 'insert'
            {%- endif %}
        end as change_type,
        record_versions.change_reason as reason,
        record_versions.last_ingest_batch_id as ingest_batch_id

    from record_versions
    left anti join unapplied_tenants
        on record_versions.tenant_id = unapplied_tenants.tenant_id
    {% if not is_incremental() -%}
        where record_versions.last_ingest_batch_id = record_versions.newest_batch_id
    {%- endif %}

),

final as (

    select
        ---------- ids
        tenant_id,
        record_id,

        ---------- strings
        change_type,
        reason,

        ---------- numbers
        ingest_batch_id,
        cast({{ records_commit.version }} as bigint) as records_version,

        ---------- timestamps
        cast('{{ records_commit.timestamp }}' as timestamp) as changed_at,
        cast(cast('{{ records_commit.timestamp }}' as timestamp) as date) as change_date

    from record_changes
    -- a record created and deleted before any run applied it never was in records
    where change_type is not null

)

select * from final
