{{
    config(
        partition_by=['tenant_id'],
        tblproperties={
            'delta.dataSkippingStatsColumns': 'profile_id',
        },
    )
}}

-- depends_on: {{ ref('segments') }}
{%- set segments = segment_definitions() %}
{%- do validate_segment_expressions(segments, ref('profiles')) %}

with

profiles as (

    select
        tenant_id,
        profile_id,
        identities,
        identity_names,
        live_records,
        identity_count,
        record_count,
        record_count_by_type,
        first_event_ts,
        last_event_ts,
        last_event_ts_by_type

    from {{ ref('profiles') }}

),

evaluated as (

    select
        tenant_id,
        profile_id,
        {{ segment_ids_sql(segments) }} as segment_ids

    from profiles

),

final as (

    select
        ---------- ids
        tenant_id,
        profile_id,

        ---------- strings
        segment_ids,

        ---------- numbers
        size(segment_ids) as segment_count

    from evaluated

)

select * from final
