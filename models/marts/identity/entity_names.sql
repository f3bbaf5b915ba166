{#- Change feed on: profiles read what each run changed (profile_lake.mart_feeds). Lines are
    read through the erased set (SPEC.md section 7); int_erasure_applications, which runs
    first, deletes the names of the identities a request erases. -#}
-- depends_on: {{ ref('int_erasure_applications') }}
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

erased_sets as (

    {{ erased_sets() }}  -- noqa: LT09, LT14, RF04

),

name_updates as (

    select
        name_lines.tenant_id,
        name_lines.id,
        name_lines.name,
        name_lines.seq,
        name_lines.updated_ts,
        name_lines.ingest_batch_id

    from {{ ref('stg_entity_names__updates') }} as name_lines
    left join erased_sets
        on name_lines.tenant_id = erased_sets.tenant_id
    where
        name_lines.is_accepted
        and {{ in_run_tenant_scope('name_lines.tenant_id') }}
        and name_lines.ingest_batch_id > {{ batch_watermark(row_tenant_column='name_lines.tenant_id') }}
        and not {{ adapter.erasure_filter_sql('identity_erased', 'name_lines.id') }}

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
