{#- Per tenant, its most-connected canonical identities: how many other identities live
    records link each one to, and how many live records carry it. A shared test email or
    device id shows here first. A run re-ranks the tenants whose connection counts, profiles or
    profile memberships changed, from the counts `int_identity_connections` keeps. -#}
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
    changed_tenants([ref('int_identity_connections'), ref('profile_identities'), ref('profiles')]),
) %}

with

connections as (

    select
        tenant_id,
        identity_id,
        linked_identities,
        record_count

    from {{ ref('int_identity_connections') }}
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
