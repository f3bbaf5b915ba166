{#- merge_change_columns: every other column derives from these three, and maps cannot be
    compared. -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key=['tenant_id', 'profile_id'],
        merge_change_columns=['identities', 'identity_names', 'live_records'],
        partition_by=['tenant_id'],
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
{%- set names_changed = ref('entity_names') if name_changes.kind == 'all' else source_changes_relation(
    ref('entity_names'), name_changes
) %}

{% if is_incremental() %}
    {#- Records, renames and links reach a profile through the graph: each run restamps in
        int_profile_identities_resolved every identity its changes reach (before and after),
        so the profiles of its changed rows are the ones to recompute; names do not, so the
        profiles of changed names are added. -#}
    {% set touched_profiles_sql %}
        select tenant_id, profile_id
        from ({{ changed_keys(ref('int_profile_identities_resolved'), resolved_changes, ['tenant_id', 'profile_id']) }})
        where profile_id is not null
        union
        select identity_profiles.tenant_id, identity_profiles.profile_id
        from {{ ref('int_identities_mapped_to_profiles') }} as identity_profiles
        left semi join {{ names_changed }} as names_changed
            on identity_profiles.tenant_id = names_changed.tenant_id and identity_profiles.identity_id = names_changed.id
    {% endset %}
    {%- set touched_profiles = cached_query('touched_profiles', touched_profiles_sql) %}
    {#- every identity (renamed-away ones too) of a touched profile -#}
    {% set touched_identities_sql %}
        select /*+ broadcast(touched) */ identity_profiles.tenant_id, identity_profiles.identity_id,
            identity_profiles.canonical_id, identity_profiles.profile_id
        from {{ ref('int_identities_mapped_to_profiles') }} as identity_profiles
        left semi join {{ touched_profiles }} as touched
            on identity_profiles.tenant_id = touched.tenant_id and identity_profiles.profile_id = touched.profile_id
    {% endset %}
    {%- set touched_identities = cached_query('touched_identities', touched_identities_sql) %}
{% endif %}

with

{% if is_incremental() %}
    touched_profiles as (

        select
            tenant_id,
            profile_id

        from {{ touched_profiles }}

    ),
{% endif %}

profile_identities as (

    select
        tenant_id,
        identity_id,
        profile_id

    from {{ ref('profile_identities') }}
    {% if is_incremental() -%}
        where (tenant_id, profile_id) in (select tenant_id, profile_id from touched_profiles)
    {%- endif %}

),

identity_map as (

    select
        tenant_id,
        identity_id,
        canonical_id

    {#- incremental: the names read are those of the touched identities, whose map rows these are #}
    from {{ touched_identities if is_incremental() else ref('identity_map') }}

),

identity_profiles as (

    select
        tenant_id,
        identity_id,
        canonical_id,
        profile_id

    from {{ touched_identities if is_incremental() else ref('int_identities_mapped_to_profiles') }}

),

records as (

    select
        tenant_id,
        record_id,
        primary_id,
        record_type,
        event_ts

    from {{ ref('records') }}
    {% if is_incremental() -%}
        where (tenant_id, primary_id) in (select tenant_id, identity_id from identity_profiles)
    {%- endif %}

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
    {% if is_incremental() -%}
            and (tenant_id, id) in (select tenant_id, identity_id from identity_profiles)
        {%- endif %}

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
        coalesce(identity_map.canonical_id, entity_names.id) as identity_id,
        max_by(
            entity_names.name,
            named_struct(
                'is_own', coalesce(identity_map.canonical_id, entity_names.id) = entity_names.id,
                'updated_ts', entity_names.updated_ts,
                'seq', entity_names.seq
            )
        ) as name

    from entity_names
    left join identity_map
        on
            entity_names.tenant_id = identity_map.tenant_id
            and entity_names.id = identity_map.identity_id
    group by entity_names.tenant_id, coalesce(identity_map.canonical_id, entity_names.id)

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
        profile_members.tenant_id,
        profile_members.profile_id,

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
        coalesce(profile_type_summaries.last_event_ts_by_type, map()) as last_event_ts_by_type

    {%- if is_incremental() %},

            ---------- merge control: incremental runs only, never a column of the table
            false as _delete_row
        {%- endif %}

    from profile_members
    left join profile_records
        on
            profile_members.tenant_id = profile_records.tenant_id
            and profile_members.profile_id = profile_records.profile_id
    left join profile_type_summaries
        on
            profile_members.tenant_id = profile_type_summaries.tenant_id
            and profile_members.profile_id = profile_type_summaries.profile_id

){% if is_incremental() %},

    {#- a touched profile with no identity left is gone (its identities moved or went) -#}
    removed_profiles as (

        select
            touched_profiles.tenant_id,
            touched_profiles.profile_id,
            cast(null as array<string>) as identities,
            cast(null as array<struct<identity_id: string, name: string>>) as identity_names,
            cast(null as array<struct<record_id: string, record_type: string, event_ts: timestamp>>) as live_records,
            cast(null as bigint) as identity_count,
            cast(null as bigint) as record_count,
            cast(null as map<string, bigint>) as record_count_by_type,
            cast(null as timestamp) as first_event_ts,
            cast(null as timestamp) as last_event_ts,
            cast(null as map<string, timestamp>) as last_event_ts_by_type,
            true as _delete_row

        from touched_profiles
        left anti join profile_members
            on
                touched_profiles.tenant_id = profile_members.tenant_id
                and touched_profiles.profile_id = profile_members.profile_id

    )
{% endif %}

select * from final
{%- if is_incremental() %}

    union all

    select * from removed_profiles
{%- endif %}
