{#- A segment that reads the clock names in `changes_at` the moments its membership can change
    for a profile; each row keeps the next of them (next_change_ts), and a run re-evaluates the
    profiles that changed and those whose moment has come. -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key=['tenant_id', 'profile_id'],
        partition_by=['tenant_id'],
        zorder_by=['profile_id'],
        tblproperties={
            'delta.dataSkippingStatsColumns': 'profile_id,next_change_ts',
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
{#- every profile is evaluated when the definitions changed, or a segment reads the clock with
    no changes_at to say when -#}
{%- set definitions_digest = local_md5(tojson(segments)) %}
{%- set built_digest = swap_stamp('segments_digest', definitions_digest) %}
{%- set evaluate_every_profile = built_digest != definitions_digest or unbounded_clock_segments(segments) %}
{%- set profiles_due_sql -%}
select
        tenant_id,
        profile_id
    from {{ this }}
    where next_change_ts <= {{ segment_evaluation_ts() }}
{%- endset %}
{%- set changed_profiles = recompute_keys(
    'changed_profiles',
    ['tenant_id', 'profile_id'],
    changed_keys(
        ref('profiles'), {'kind': 'all'} if evaluate_every_profile else profile_changes, ['tenant_id', 'profile_id']
    ) ~ ('\n\n    union\n\n    ' ~ profiles_due_sql if is_incremental() and not evaluate_every_profile else ''),
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
        {{ segment_ids_sql(segments) }} as segment_ids,
        {{ segment_next_change_sql(segments) }} as next_change_ts

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

        ---------- timestamps
        evaluated.next_change_ts,

        ---------- merge control: a changed profile that is gone from profiles leaves its segments
        evaluated.profile_id is null as _delete_row

    from changed_profiles
    left join evaluated
        on
            changed_profiles.tenant_id = evaluated.tenant_id
            and changed_profiles.profile_id = evaluated.profile_id

)

{{ merge_rows('final', changed_profiles) }}
