{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key=['tenant_id', 'profile_id'],
        partition_by=['tenant_id'],
        zorder_by=['profile_id'],
        tblproperties={
            'delta.dataSkippingStatsColumns': 'profile_id',
            'delta.enableDeletionVectors': 'true',
            'delta.enableChangeDataFeed': 'true',
        },
        post_hook="{{ record_consumed_versions() }}",
    )
}}

-- depends_on: {{ ref('segments') }}
{%- set segments = segment_definitions() %}
{%- do validate_segment_expressions(segments, ref('profiles')) %}
{%- set profile_changes = source_changes(ref('profiles')) %}
{#- every profile is evaluated when a segment reads the clock, or the definitions changed -#}
{%- set definitions_digest = local_md5(tojson(segments)) %}
{%- set built_digest = swap_stamp('segments_digest', definitions_digest) %}
{%- set clock_segments = [] %}
{%- for segment in segments if is_time_dependent(segment.expression) %}
    {%- do clock_segments.append(segment.segment_id) %}
{%- endfor %}
{%- set evaluate_every_profile = built_digest != definitions_digest or clock_segments %}
{%- set changed_profiles = recompute_keys(
    'changed_profiles',
    ['tenant_id', 'profile_id'],
    changed_keys(ref('profiles'), {'kind': 'all'} if evaluate_every_profile else profile_changes, ['tenant_id', 'profile_id']),
    every=evaluate_every_profile,
) %}

with

changed_profiles as (

    {{ changed_profiles.body }}

),

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
    where {{ key_filter(changed_profiles, ['tenant_id', 'profile_id']) }}

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
        changed_profiles.tenant_id,
        changed_profiles.profile_id,

        ---------- strings
        evaluated.segment_ids,

        ---------- numbers
        size(evaluated.segment_ids) as segment_count,

        ---------- merge control: a changed profile that is gone from profiles leaves its segments
        evaluated.profile_id is null as _delete_row

    from changed_profiles
    left join evaluated
        on
            changed_profiles.tenant_id = evaluated.tenant_id
            and changed_profiles.profile_id = evaluated.profile_id

)

{{ merge_rows('final') }}
