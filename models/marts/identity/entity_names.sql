{#- Change feed on: profiles read what each run changed (profile_lake.mart_feeds). -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key=['tenant_id', 'id'],
        partition_by=['tenant_id'],
        zorder_by=['id'],
        tblproperties={
            'delta.dataSkippingStatsColumns': 'id,updated_ts,ingest_batch_id',
            'delta.enableChangeDataFeed': 'true',
        },
    )
}}

with

name_updates as (

    select
        tenant_id,
        id,
        name,
        seq,
        updated_ts,
        ingest_batch_id

    from {{ ref('stg_entity_names__updates') }}
    where
        is_accepted
        and {{ in_run_tenant_scope('tenant_id') }}
        and ingest_batch_id > {{ batch_watermark() }}

),

latest_updates as (

    select
        tenant_id,
        id,
        max_by(
            named_struct('name', name, 'seq', seq, 'updated_ts', updated_ts, 'ingest_batch_id', ingest_batch_id),
            named_struct('updated_ts', updated_ts, 'seq', seq)
        ) as latest

    from name_updates
    group by tenant_id, id

),

{% if is_incremental() %}
    current_names as (

        select
            tenant_id,
            id,
            seq,
            updated_ts

        from {{ this }}

    ),
{% endif %}

newer_than_current as (

    select
        latest_updates.tenant_id,
        latest_updates.id,
        latest_updates.latest.name,
        latest_updates.latest.seq,
        latest_updates.latest.updated_ts,
        latest_updates.latest.ingest_batch_id

    from latest_updates
    {% if is_incremental() -%}
        left join current_names
            on
                latest_updates.tenant_id = current_names.tenant_id
                and latest_updates.id = current_names.id
        where
            current_names.id is null
            or named_struct('updated_ts', latest_updates.latest.updated_ts, 'seq', latest_updates.latest.seq)
            > named_struct('updated_ts', current_names.updated_ts, 'seq', current_names.seq)
    {%- endif %}

),

final as (

    select
        ---------- ids
        tenant_id,
        id,

        ---------- strings
        name,

        ---------- numbers
        seq,
        ingest_batch_id,

        ---------- timestamps
        updated_ts

    from newer_than_current

)

select * from final
