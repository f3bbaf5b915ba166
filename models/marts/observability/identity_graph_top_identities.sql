{#- Per tenant, its most-connected canonical identities: how many other identities live
    records link each one to, and how many live records carry it. A shared test email or
    device id shows here first. A run re-ranks the tenants its changes reach: changes of
    records and renames reach the graph's feed (it restamps every identity of a changed record
    and both ends of a rename), and `records` and `identity_map` keep no feed of their own. -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key=['tenant_id', 'identity_id'],
        post_hook="{{ record_consumed_versions() }}",
    )
}}

{%- set tenants_to_rank = recompute_keys(
    'tenants_to_rank',
    ['tenant_id'],
    changed_tenants([ref('int_profile_identities_resolved'), ref('profile_identities'), ref('profiles')]),
) %}

with

records as (

    select
        tenant_id,
        record_id,
        primary_id,
        related_ids

    from {{ ref('records') }}
    where {{ key_filter(tenants_to_rank, ['tenant_id']) }}

),

identity_map as (

    select
        tenant_id,
        identity_id,
        canonical_id

    from {{ ref('identity_map') }}
    where {{ key_filter(tenants_to_rank, ['tenant_id']) }}

),

profile_identities as (

    select
        tenant_id,
        identity_id,
        profile_id

    from {{ ref('profile_identities') }}
    where {{ key_filter(tenants_to_rank, ['tenant_id']) }}

),

profiles as (

    select
        tenant_id,
        profile_id,
        identity_count

    from {{ ref('profiles') }}
    where {{ key_filter(tenants_to_rank, ['tenant_id']) }}

),

record_ends as (

    {#- a live record links its primary identity to each related one (SPEC.md section 4) -#}
    select
        tenant_id,
        record_id,
        primary_id,
        explode_outer(related_ids) as related_id

    from records

),

canonical_ends as (

    select
        record_ends.tenant_id,
        record_ends.record_id,
        coalesce(primary_map.canonical_id, record_ends.primary_id) as primary_id,
        coalesce(related_map.canonical_id, record_ends.related_id) as related_id

    from record_ends
    left join identity_map as primary_map
        on
            record_ends.tenant_id = primary_map.tenant_id
            and record_ends.primary_id = primary_map.identity_id
    left join identity_map as related_map
        on
            record_ends.tenant_id = related_map.tenant_id
            and record_ends.related_id = related_map.identity_id

),

identity_ends as (

    select
        tenant_id,
        record_id,
        primary_id as identity_id,
        related_id as linked_id

    from canonical_ends
    union all
    select
        tenant_id,
        record_id,
        related_id as identity_id,
        primary_id as linked_id

    from canonical_ends
    where related_id is not null

),

connections as (

    select
        tenant_id,
        identity_id,
        count(distinct case when linked_id != identity_id then linked_id end) as linked_identities,
        count(distinct record_id) as record_count

    from identity_ends
    group by tenant_id, identity_id

),

ranked as (

    select
        *,
        row_number() over (
            partition by tenant_id
            order by linked_identities desc, record_count desc, identity_id asc
        ) as connection_rank

    from connections

),

top_identities as (

    select
        ---------- ids
        ranked.tenant_id,
        ranked.identity_id,
        profile_identities.profile_id,

        ---------- strings
        split_part(ranked.identity_id, ':', 1) as identity_namespace,

        ---------- numbers
        ranked.connection_rank,
        ranked.linked_identities,
        ranked.record_count,
        profiles.identity_count as profile_identity_count

    from ranked
    left join profile_identities
        on
            ranked.tenant_id = profile_identities.tenant_id
            and ranked.identity_id = profile_identities.identity_id
    left join profiles
        on
            profile_identities.tenant_id = profiles.tenant_id
            and profile_identities.profile_id = profiles.profile_id
    where ranked.connection_rank <= {{ var('top_identities_per_tenant', 20) }}

),

stored_identities as (

    {{ stored_keys(tenants_to_rank, ['tenant_id', 'identity_id']) }}

),

final as (

    select
        ---------- ids
        coalesce(top_identities.tenant_id, stored_identities.tenant_id) as tenant_id,
        coalesce(top_identities.identity_id, stored_identities.identity_id) as identity_id,
        top_identities.profile_id,

        ---------- strings
        top_identities.identity_namespace,

        ---------- numbers
        top_identities.connection_rank,
        top_identities.linked_identities,
        top_identities.record_count,
        top_identities.profile_identity_count,

        ---------- merge control: a stored identity no longer ranked is gone
        top_identities.identity_id is null as _delete_row

    from top_identities
    full outer join stored_identities
        on
            top_identities.tenant_id = stored_identities.tenant_id
            and top_identities.identity_id = stored_identities.identity_id

)

{{ merge_rows('final', tenants_to_rank) }}
