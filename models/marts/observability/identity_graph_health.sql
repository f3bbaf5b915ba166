{#- Per tenant: how its identity graph is shaped (profile sizes, identities per namespace),
    so a collapsing graph (one shared identity pulling many people into one profile) shows.
    A run re-measures the tenants its changes reach; measured_at always moves, so every
    re-measured row is written. -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key=['tenant_id'],
        merge_change_columns=['measured_at'],
        post_hook="{{ record_consumed_versions() }}",
    )
}}

{%- set tenants_to_measure = recompute_keys(
    'tenants_to_measure', ['tenant_id'], changed_tenants([ref('tenants'), ref('profiles'), ref('profile_identities')])
) %}

with

tenants_to_measure as (

    {{ tenants_to_measure.body }}

),

tenants as (

    select
        tenant_id,
        max_profile_identities

    from {{ ref('tenants') }}
    where {{ key_filter(tenants_to_measure, ['tenant_id']) }}

),

profiles as (

    select
        tenant_id,
        profile_id,
        identity_count,
        record_count

    from {{ ref('profiles') }}
    where {{ key_filter(tenants_to_measure, ['tenant_id']) }}

),

profile_identities as (

    select
        tenant_id,
        identity_id

    from {{ ref('profile_identities') }}
    where {{ key_filter(tenants_to_measure, ['tenant_id']) }}

),

bounded_profiles as (

    select
        profiles.tenant_id,
        profiles.profile_id,
        profiles.identity_count,
        profiles.record_count,
        profiles.identity_count > tenants.max_profile_identities as is_over_bound

    from profiles
    left join tenants
        on profiles.tenant_id = tenants.tenant_id

),

profile_sizes as (

    select
        tenant_id,
        count(*) as profile_count,
        sum(identity_count) as identity_count,
        sum(record_count) as record_count,
        count_if(is_over_bound) as profiles_over_bound,
        -- the largest profile; of equal ones, the smallest profile_id
        min_by(profile_id, named_struct('size', -identity_count, 'profile_id', profile_id))
            as largest_profile_id,
        cast(percentile(identity_count, 0.5) as double) as identities_p50,
        cast(percentile(identity_count, 0.9) as double) as identities_p90,
        cast(percentile(identity_count, 0.99) as double) as identities_p99,
        max(identity_count) as identities_max,
        cast(percentile(record_count, 0.5) as double) as records_p50,
        cast(percentile(record_count, 0.9) as double) as records_p90,
        cast(percentile(record_count, 0.99) as double) as records_p99,
        max(record_count) as records_max

    from bounded_profiles
    group by tenant_id

),

size_counts as (

    select
        tenant_id,
        identity_count,
        count(*) as profile_count

    from profiles
    group by tenant_id, identity_count

),

size_distributions as (

    select
        tenant_id,
        map_from_entries(array_sort(collect_list(struct(identity_count, profile_count))))
            as profiles_by_identity_count

    from size_counts
    group by tenant_id

),

namespace_counts as (

    select
        tenant_id,
        split_part(identity_id, ':', 1) as identity_namespace,
        count(*) as identity_count

    from profile_identities
    group by tenant_id, split_part(identity_id, ':', 1)

),

namespaces as (

    select
        tenant_id,
        map_from_entries(array_sort(collect_list(struct(identity_namespace, identity_count))))
            as identities_by_namespace

    from namespace_counts
    group by tenant_id

),

measured as (

    select
        ---------- ids
        tenants.tenant_id,
        profile_sizes.largest_profile_id,

        ---------- numbers
        coalesce(profile_sizes.profile_count, 0) as profile_count,
        coalesce(profile_sizes.identity_count, 0) as identity_count,
        coalesce(profile_sizes.record_count, 0) as record_count,
        profile_sizes.identities_p50,
        profile_sizes.identities_p90,
        profile_sizes.identities_p99,
        profile_sizes.identities_max,
        profile_sizes.records_p50,
        profile_sizes.records_p90,
        profile_sizes.records_p99,
        profile_sizes.records_max,
        tenants.max_profile_identities,
        coalesce(profile_sizes.profiles_over_bound, 0) as profiles_over_bound,
        coalesce(namespaces.identities_by_namespace, map()) as identities_by_namespace,
        coalesce(size_distributions.profiles_by_identity_count, map()) as profiles_by_identity_count,

        ---------- timestamps
        current_timestamp() as measured_at

    from tenants
    left join profile_sizes
        on tenants.tenant_id = profile_sizes.tenant_id
    left join namespaces
        on tenants.tenant_id = namespaces.tenant_id
    left join size_distributions
        on tenants.tenant_id = size_distributions.tenant_id

),

final as (

    select
        ---------- ids
        tenants_to_measure.tenant_id,
        measured.largest_profile_id,

        ---------- numbers
        measured.profile_count,
        measured.identity_count,
        measured.record_count,
        measured.identities_p50,
        measured.identities_p90,
        measured.identities_p99,
        measured.identities_max,
        measured.records_p50,
        measured.records_p90,
        measured.records_p99,
        measured.records_max,
        measured.max_profile_identities,
        measured.profiles_over_bound,
        measured.identities_by_namespace,
        measured.profiles_by_identity_count,

        ---------- timestamps
        measured.measured_at,

        ---------- merge control: a tenant gone from the seed is gone
        measured.tenant_id is null as _delete_row

    from tenants_to_measure
    left join measured
        on tenants_to_measure.tenant_id = measured.tenant_id

)

{{ merge_rows('final', tenants_to_measure) }}
