{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key=['tenant_id', 'record_id'],
        partition_by=(['tenant_id'] if records_layout() == 'partitioned_zorder' else none),
        zorder_by=(['primary_id', 'event_ts'] if records_layout() == 'partitioned_zorder' else none),
        liquid_clustered_by=(['tenant_id', 'primary_id', 'event_ts'] if records_layout() == 'liquid' else none),
        tblproperties={
            'delta.enableChangeDataFeed': 'true',
            'delta.dataSkippingStatsColumns': (
                'tenant_id,' if records_layout() == 'liquid' else ''
            ) ~ 'record_id,primary_id,event_ts,ingest_batch_id',
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
        and last_ingest_batch_id > {{ batch_watermark(row_tenant_column='tenant_id') }}

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

    from record_states
    {% if not is_incremental() %}
        where not is_deleted
    {% endif %}

)

select * from final
