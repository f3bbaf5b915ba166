{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        partition_by=['tenant_id', 'change_date'],
        tblproperties={
            'delta.appendOnly': 'true',
            'delta.dataSkippingStatsColumns': 'record_id,records_version,ingest_batch_id,changed_at',
        },
        post_hook="{{ bookmark_change_feed_read(this) }}",
    )
}}

{#- Changes of `records` newer than the last version already notified to each tenant, read
    from its change feed up to the version seen when the run started: one run's range is fixed,
    and each tenant's watermark (its newest records_version here) moves in the same commit as
    its rows. Watermarks are per tenant because runs scoped to other tenants (var tenants)
    notify their own changes of `records` independently. -#}
{%- set latest_version = delta_table_version(ref('records')) -%}
{#- once the rows are in, the post-hook bookmarks that version for the run's tenants, so that a
    tenant without changes does not hold later runs to a start at its last change -#}
{%- do remember_change_feed_read(this, latest_version) -%}
{#- int_record_states keeps a tombstone of every deleted record, so it knows every tenant
    that ever had records, even one whose records were all deleted before a first notify. -#}
{%- set first_version = change_feed_start_version(
    ref('records'), 'records_version', tenant_relations=[ref('int_record_states')]
) %}
{#- a first build starts at records' latest creation or replacement (its full refresh), whose
    deletes are of the table it replaced: this table starts with the rows as they are (-1: no
    version, in incremental runs) -#}
{%- set replaced_at = first_version
    if not is_incremental() and first_version in delta_table_creations(ref('records')) else -1 %}

with

feed_changes as (

    select
        tenant_id,
        record_id,
        _change_type as change_type,
        ingest_batch_id,
        _commit_version as records_version,
        _commit_timestamp as changed_at

    from {{ delta_change_feed(ref('records'), first_version, latest_version) }} as feed
    where
        _change_type != 'update_preimage'
        and {{ in_run_tenant_scope('tenant_id') }}
        and _commit_version > {{ batch_watermark('records_version', default=first_version - 1) }}
        and not (_change_type = 'delete' and _commit_version = {{ replaced_at }})

),

record_changes as (

    {#- a MERGE changes a record once per version; a replacement of records (its full refresh)
        deletes and inserts each record that stays in one version: one update for it -#}
    select
        tenant_id,
        record_id,
        if(count(*) > 1, 'update_postimage', max(change_type)) as change_type,
        max_by(ingest_batch_id, change_type != 'delete') as ingest_batch_id,
        records_version,
        max(changed_at) as changed_at

    from feed_changes
    group by tenant_id, record_id, records_version

),

record_states as (

    {#- int_record_states keeps each version of a record (a late older event appends another
        tombstone): the newest tombstone carries the batch of the record's latest delete #}
    select
        tenant_id,
        record_id,
        max(last_ingest_batch_id) as last_ingest_batch_id

    from {{ ref('int_record_states') }}
    where is_deleted
    group by tenant_id, record_id

),

final as (

    select
        ---------- ids
        record_changes.tenant_id,
        record_changes.record_id,

        ---------- strings
        case
            when record_changes.change_type = 'update_postimage' then 'update'
            else record_changes.change_type
        end as change_type,

        ---------- numbers
        -- a deleted row carries its last upsert's batch; the delete's batch is its tombstone's
        case
            when record_changes.change_type = 'delete'
                then coalesce(record_states.last_ingest_batch_id, record_changes.ingest_batch_id)
            else record_changes.ingest_batch_id
        end as ingest_batch_id,
        record_changes.records_version,

        ---------- timestamps
        record_changes.changed_at,
        cast(record_changes.changed_at as date) as change_date

    from record_changes
    left join record_states
        on
            record_changes.change_type = 'delete'
            and record_changes.tenant_id = record_states.tenant_id
            and record_changes.record_id = record_states.record_id

)

select * from final
