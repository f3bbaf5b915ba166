{#- merge_change_columns: every other column derives from these three, and maps cannot be
    compared. -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key=['tenant_id', 'profile_id'],
        merge_change_columns=['identities', 'identity_names', 'live_records'],
        partition_by=['tenant_id'],
        zorder_by=['profile_id'],
        tblproperties={
            'delta.dataSkippingStatsColumns': 'profile_id,record_count,first_event_ts,last_event_ts',
            'delta.enableChangeDataFeed': 'true',
            'delta.enableDeletionVectors': 'true',
        },
        post_hook="{{ record_consumed_versions() }}",
    )
}}

{%- set resolved_changes = source_changes(ref('int_profile_identities_resolved')) %}
{%- set name_changes = source_changes(ref('entity_names')) %}
{#- Records, renames and links reach a profile through the graph: each run restamps in
    int_profile_identities_resolved every identity its changes reach (before and after), so
    the profiles of its changed rows are the ones to recompute; names do not, so the profiles
    of changed names are added. #}
{%- set touched_profiles_sql -%}
    select
        resolved_changes.tenant_id,
        resolved_changes.profile_id

    from (
        {{ changed_keys(ref('int_profile_identities_resolved'), resolved_changes, ['tenant_id', 'profile_id']) }}
    ) as resolved_changes
    where resolved_changes.profile_id is not null

    union

    select
        identity_profiles.tenant_id,
        identity_profiles.profile_id

    from {{ ref('int_identities_mapped_to_profiles') }} as identity_profiles
    left semi join {{ changed_rows(ref('entity_names'), name_changes) }} as names_changed
        on
            identity_profiles.tenant_id = names_changed.tenant_id
            and identity_profiles.identity_id = names_changed.id
{%- endset %}
{%- set touched_profiles = recompute_keys(
    'touched_profiles', ['tenant_id', 'profile_id'], touched_profiles_sql
) %}
{#- every identity (renamed-away ones too) of a touched profile, with its canonical identity,
    whose names these are #}
{%- set identity_profiles_sql -%}
select
    tenant_id,
    identity_id,
    canonical_id,
    profile_id

from {{ ref('int_identities_mapped_to_profiles') }}
where {{ key_filter(touched_profiles, ['tenant_id', 'profile_id']) }}
{%- endset %}
{%- set touched_identities = recompute_keys(
    'touched_identities', ['tenant_id', 'identity_id'], identity_profiles_sql
) %}

with

touched_profiles as (

    {{ touched_profiles.body }}

),

profile_identities as (

    select
        tenant_id,
        identity_id,
        profile_id

    from {{ ref('profile_identities') }}
    where {{ key_filter(touched_profiles, ['tenant_id', 'profile_id']) }}

),

identity_profiles as (

    {{ identity_profiles_sql }}

),

records as (

    select
        tenant_id,
        record_id,
        primary_id,
        record_type,
        event_ts

    from {{ ref('records') }}
    where {{ key_filter(touched_identities, ['tenant_id', 'primary_id']) }}

),

entity_names as (

    select
        tenant_id,
        id,
        name,
        seq,
        updated_ts

    from {{ ref('entity_names') }}
    where
        name is not null
        and {{ key_filter(touched_identities, ['tenant_id', 'id']) }}

),

record_profiles as (

    select
        records.tenant_id,
        identity_profiles.profile_id,
        records.record_id,
        records.record_type,
        records.event_ts

    from records
    inner join identity_profiles
        on
            records.tenant_id = identity_profiles.tenant_id
            and records.primary_id = identity_profiles.identity_id

),

profile_records as (

    select
        tenant_id,
        profile_id,
        count(*) as record_count,
        array_sort(
            collect_list(named_struct('record_id', record_id, 'record_type', record_type, 'event_ts', event_ts))
        ) as live_records,
        min(event_ts) as first_event_ts,
        max(event_ts) as last_event_ts

    from record_profiles
    group by tenant_id, profile_id

),

profile_record_types as (

    select
        tenant_id,
        profile_id,
        record_type,
        count(*) as record_count,
        max(event_ts) as last_event_ts

    from record_profiles
    -- records.record_type is tested not null; a null map key would fail the whole build
    where record_type is not null
    group by tenant_id, profile_id, record_type

),

profile_type_summaries as (

    {#- Maps keyed by record type let a segment ask "an event in the last 7 days" with a map
        look-up, which Spark compiles to code; a lambda over live_records is interpreted row by
        row. #}
    select
        tenant_id,
        profile_id,
        map_from_entries(array_sort(collect_list(struct(record_type, record_count)))) as record_count_by_type,
        map_from_entries(array_sort(collect_list(struct(record_type, last_event_ts)))) as last_event_ts_by_type

    from profile_record_types
    group by tenant_id, profile_id

),

canonical_names as (

    {#- A name belongs to the canonical identity its identity maps to; when several identities
        of one canonical identity are named, the canonical identity's own name wins, then the
        latest. #}
    select
        entity_names.tenant_id,
        coalesce(identity_profiles.canonical_id, entity_names.id) as identity_id,
        max_by(
            entity_names.name,
            named_struct(
                'is_own', coalesce(identity_profiles.canonical_id, entity_names.id) = entity_names.id,
                'updated_ts', entity_names.updated_ts,
                'seq', entity_names.seq
            )
        ) as name

    from entity_names
    left join identity_profiles
        on
            entity_names.tenant_id = identity_profiles.tenant_id
            and entity_names.id = identity_profiles.identity_id
    group by entity_names.tenant_id, coalesce(identity_profiles.canonical_id, entity_names.id)

),

named_identities as (

    select
        profile_identities.tenant_id,
        profile_identities.profile_id,
        profile_identities.identity_id,
        canonical_names.name

    from profile_identities
    left join canonical_names
        on
            profile_identities.tenant_id = canonical_names.tenant_id
            and profile_identities.identity_id = canonical_names.identity_id

),

profile_members as (

    select
        tenant_id,
        profile_id,
        array_sort(collect_list(identity_id)) as identities,
        count(*) as identity_count,
        array_sort(
            collect_list(
                case when name is not null then named_struct('identity_id', identity_id, 'name', name) end
            )
        ) as identity_names

    from named_identities
    group by tenant_id, profile_id

),

final as (

    select
        ---------- ids
        touched_profiles.tenant_id,
        touched_profiles.profile_id,

        ---------- strings
        profile_members.identities,
        profile_members.identity_names,
        coalesce(profile_records.live_records, array()) as live_records,

        ---------- numbers
        profile_members.identity_count,
        coalesce(profile_records.record_count, 0) as record_count,
        coalesce(profile_type_summaries.record_count_by_type, map()) as record_count_by_type,

        ---------- timestamps
        profile_records.first_event_ts,
        profile_records.last_event_ts,
        coalesce(profile_type_summaries.last_event_ts_by_type, map()) as last_event_ts_by_type,

        ---------- merge control: a touched profile with no identity left is gone
        profile_members.profile_id is null as _delete_row

    from touched_profiles
    left join profile_members
        on
            touched_profiles.tenant_id = profile_members.tenant_id
            and touched_profiles.profile_id = profile_members.profile_id
    left join profile_records
        on
            touched_profiles.tenant_id = profile_records.tenant_id
            and touched_profiles.profile_id = profile_records.profile_id
    left join profile_type_summaries
        on
            touched_profiles.tenant_id = profile_type_summaries.tenant_id
            and touched_profiles.profile_id = profile_type_summaries.profile_id

)

{{ merge_rows('final', touched_profiles) }}
