{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key=['tenant_id', 'profile_id'],
        partition_by=['tenant_id'],
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
{%- set evaluate_every_profile = not is_incremental() or built_digest != definitions_digest or clock_segments %}

{% if is_incremental() %}
    {%- set changed_profiles = cached_query(
        'changed_profiles', changed_keys(ref('profiles'), profile_changes, ['tenant_id', 'profile_id'])
    ) %}
{% endif %}

with

{% if is_incremental() %}
    changed_profiles as (

        select
            tenant_id,
            profile_id

        from {{ changed_profiles }}

    ),
{% endif %}

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
    {% if not evaluate_every_profile -%}
        where (tenant_id, profile_id) in (select tenant_id, profile_id from changed_profiles)
    {%- endif %}

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

    {%- if is_incremental() %},

            ---------- merge control: incremental runs only, never a column of the table
            false as _delete_row
        {%- endif %}

    from evaluated

){% if is_incremental() %},

    {#- a changed profile that is gone from profiles leaves its segments -#}
    removed_profiles as (

        select
            changed_profiles.tenant_id,
            changed_profiles.profile_id,
            cast(null as array<string>) as segment_ids,
            cast(null as int) as segment_count,
            true as _delete_row

        from changed_profiles
        left anti join {{ ref('profiles') }} as current_profiles
            on
                changed_profiles.tenant_id = current_profiles.tenant_id
                and changed_profiles.profile_id = current_profiles.profile_id

    )
{% endif %}

select * from final
{%- if is_incremental() %}

    union all

    select * from removed_profiles
{%- endif %}
