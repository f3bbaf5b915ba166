{#- Per tenant: how its identity graph is shaped (profile sizes, identities per namespace),
    so a collapsing graph (one shared identity pulling many people into one profile) shows.
    A run re-measures the tenants its changes reach, from the counts kept up from the graph's
    changes (`int_profile_sizes`, `int_identity_namespace_counts`), and reads of `profiles`
    only the largest profiles' files; measured_at always moves, so every re-measured row is
    written. -#}
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
{%- set largest_sizes_sql -%}
select
        tenant_id,
        max(identity_count) as identity_count
    from {{ ref('int_profile_sizes') }}
    where
        profile_count > 0
        and {{ key_filter(tenants_to_measure, ['tenant_id']) }}
    group by tenant_id
{%- endset %}
{#- literal sizes: Delta skips the files of `profiles` holding no profile that large -#}
{%- set largest_sizes = recompute_keys(
    'largest_sizes', ['tenant_id', 'identity_count'], largest_sizes_sql
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

profile_sizes as (

    select
        tenant_id,
        identity_count,
        record_count,
        profile_count

    from {{ ref('int_profile_sizes') }}
    where
        profile_count > 0
        and {{ key_filter(tenants_to_measure, ['tenant_id']) }}

),

namespace_counts as (

    select
        tenant_id,
        identity_namespace,
        identity_count

    from {{ ref('int_identity_namespace_counts') }}
    where
        identity_count > 0
        and {{ key_filter(tenants_to_measure, ['tenant_id']) }}

),

largest_sizes as (

    {{ largest_sizes.body }}

),

largest_profiles as (

    select
        profiles.tenant_id,
        profiles.profile_id

    from {{ ref('profiles') }} as profiles
    left semi join largest_sizes
        on
            profiles.tenant_id = largest_sizes.tenant_id
            and profiles.identity_count = largest_sizes.identity_count
    where {{ key_filter(largest_sizes, ['profiles.tenant_id', 'profiles.identity_count']) }}

),

bounded_sizes as (

    select
        profile_sizes.tenant_id,
        profile_sizes.identity_count,
        profile_sizes.record_count,
        profile_sizes.profile_count,
        profile_sizes.identity_count > tenants.max_profile_identities as is_over_bound

    from profile_sizes
    left join tenants
        on profile_sizes.tenant_id = tenants.tenant_id

),

size_summaries as (

    select
        tenant_id,
        sum(profile_count) as profile_count,
        sum(identity_count * profile_count) as identity_count,
        sum(record_count * profile_count) as record_count,
        sum(case when is_over_bound then profile_count else 0 end) as profiles_over_bound,
        -- exact percentiles of the profiles, each size weighted by its profiles
        cast(percentile(identity_count, 0.5, profile_count) as double) as identities_p50,
        cast(percentile(identity_count, 0.9, profile_count) as double) as identities_p90,
        cast(percentile(identity_count, 0.99, profile_count) as double) as identities_p99,
        max(identity_count) as identities_max,
        cast(percentile(record_count, 0.5, profile_count) as double) as records_p50,
        cast(percentile(record_count, 0.9, profile_count) as double) as records_p90,
        cast(percentile(record_count, 0.99, profile_count) as double) as records_p99,
        max(record_count) as records_max

    from bounded_sizes
    group by tenant_id

),

largest as (

    -- the largest profile; of equal ones, the smallest profile_id
    select
        tenant_id,
        min(profile_id) as largest_profile_id

    from largest_profiles
    group by tenant_id

),

size_counts as (

    select
        tenant_id,
        identity_count,
        sum(profile_count) as profile_count

    from profile_sizes
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
        largest.largest_profile_id,

        ---------- numbers
        coalesce(size_summaries.profile_count, 0) as profile_count,
        coalesce(size_summaries.identity_count, 0) as identity_count,
        coalesce(size_summaries.record_count, 0) as record_count,
        size_summaries.identities_p50,
        size_summaries.identities_p90,
        size_summaries.identities_p99,
        size_summaries.identities_max,
        size_summaries.records_p50,
        size_summaries.records_p90,
        size_summaries.records_p99,
        size_summaries.records_max,
        tenants.max_profile_identities,
        coalesce(size_summaries.profiles_over_bound, 0) as profiles_over_bound,
        coalesce(namespaces.identities_by_namespace, map()) as identities_by_namespace,
        coalesce(size_distributions.profiles_by_identity_count, map()) as profiles_by_identity_count,

        ---------- timestamps
        current_timestamp() as measured_at

    from tenants
    left join size_summaries
        on tenants.tenant_id = size_summaries.tenant_id
    left join largest
        on tenants.tenant_id = largest.tenant_id
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
