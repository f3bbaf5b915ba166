{#- merge_change_columns: a row's ingest_batch_id is its version (the state of the record after
    every batch up to that one), so a source row with the target's key and batch changes nothing.
    Deletion vectors: a MERGE marks the rows it replaces instead of copying the rest of their
    files (a 1% change touches every file); OPTIMIZE rewrites the marked files.
    No change feed: record_notifications and the identity graph read what each run changes
    from the versions of int_record_states (docs/notifications.md), so the MERGE does not
    carry every column of the rows it replaces into a feed. -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key=['tenant_id', 'record_id'],
        merge_change_columns=['ingest_batch_id'],
        partition_by=(['tenant_id'] if records_layout() == 'partitioned_zorder' else none),
        zorder_by=(['primary_id', 'event_ts'] if records_layout() == 'partitioned_zorder' else none),
        liquid_clustered_by=(['tenant_id', 'primary_id', 'event_ts'] if records_layout() == 'liquid' else none),
        tblproperties={
            'delta.dataSkippingStatsColumns': (
                'tenant_id,' if records_layout() == 'liquid' else ''
            ) ~ 'record_id,primary_id,event_ts,ingest_batch_id',
            'delta.enableDeletionVectors': 'true',
        },
    )
}}

with

record_states as (

    select
        tenant_id,
        record_id,
        primary_id,
        record_type,
        related_ids,
        payload,
        is_deleted,
        event_ts,
        last_ingest_batch_id

    from {{ ref('int_record_states') }}
    where
        {{ in_run_tenant_scope('tenant_id') }}
        -- a version that leaves the record as it was touches no row (its docs say when)
        and coalesce(changes_record, true)
        and last_ingest_batch_id > {{ batch_watermark(row_tenant_column='tenant_id') }}
        {# the same bound as a literal too: Delta then skips the files of versions already
           applied (most of the states), which the per-row look-up above cannot #}
        and last_ingest_batch_id > {{ batch_watermark_floor(ref('int_record_states'), 'last_ingest_batch_id') }}

),

record_versions as (

    select
        tenant_id,
        record_id,
        last_ingest_batch_id,
        max(last_ingest_batch_id) over (partition by tenant_id, record_id) as newest_batch_id

    from record_states

),

superseded_versions as (

    {#- int_record_states appends a record's new version each run that touches it, so states
        applied after the watermark can hold several versions of a record: the newest wins.
        They are few (none after a full refresh of the states, or when each states run is
        followed by this one; delete_superseded_states removes them), so the anti-join below
        broadcasts them: only key columns are shuffled, never the payloads. #}
    select
        tenant_id,
        record_id,
        last_ingest_batch_id

    from record_versions
    where last_ingest_batch_id < newest_batch_id

),

current_states as (

    select /*+ broadcast(superseded_versions) */
        record_states.tenant_id,
        record_states.record_id,
        record_states.primary_id,
        record_states.record_type,
        record_states.related_ids,
        record_states.payload,
        record_states.is_deleted,
        record_states.event_ts,
        record_states.last_ingest_batch_id

    from record_states
    left anti join superseded_versions
        on
            record_states.tenant_id = superseded_versions.tenant_id
            and record_states.record_id = superseded_versions.record_id
            and record_states.last_ingest_batch_id = superseded_versions.last_ingest_batch_id

),

final as (

    select
        ---------- ids
        tenant_id,
        record_id,
        primary_id,

        ---------- strings
        record_type,
        related_ids,
        payload,

        ---------- numbers
        last_ingest_batch_id as ingest_batch_id,

        ---------- merge control: incremental runs only, never a column of the table
        {% if is_incremental() %}
            is_deleted as _delete_row,
        {% endif %}

        ---------- timestamps
        event_ts

    from current_states
    {% if not is_incremental() %}
        where not is_deleted
    {% endif %}

)

select * from final
