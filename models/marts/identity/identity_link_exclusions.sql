{#- A run re-reads the cut links of the tenants whose graph rows changed: a rules change or a
    new record can cut or restore a link anywhere in a tenant's components. -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key=['tenant_id', 'smaller_identity_id', 'larger_identity_id'],
        partition_by=['tenant_id'],
        post_hook="{{ record_consumed_versions() }}",
    )
}}

{%- set tenants_to_read = recompute_keys(
    'tenants_to_read', ['tenant_id'], changed_tenants([ref('int_profile_identities_resolved')])
) %}

with

resolved_identities as (

    select
        tenant_id,
        identity_id,
        cut_links

    from {{ ref('int_profile_identities_resolved') }}
    where
        size(cut_links) > 0
        and {{ key_filter(tenants_to_read, ['tenant_id']) }}

),

cut_links as (

    select
        tenant_id,
        identity_id,
        -- one row per struct: other_id, rule, namespace, event_ts, record_id
        inline(cut_links) as (other_id, rule, namespace, event_ts, record_id)

    from resolved_identities

),

exclusions as (

    select
        ---------- ids
        tenant_id,
        least(identity_id, other_id) as smaller_identity_id,
        greatest(identity_id, other_id) as larger_identity_id,
        record_id,

        ---------- strings
        rule,
        namespace,

        ---------- timestamps
        event_ts

    from cut_links

),

stored_links as (

    {{ stored_keys(tenants_to_read, ['tenant_id', 'smaller_identity_id', 'larger_identity_id']) }}

),

final as (

    select
        ---------- ids
        coalesce(exclusions.tenant_id, stored_links.tenant_id) as tenant_id,
        coalesce(exclusions.smaller_identity_id, stored_links.smaller_identity_id)
            as smaller_identity_id,
        coalesce(exclusions.larger_identity_id, stored_links.larger_identity_id)
            as larger_identity_id,
        exclusions.record_id,

        ---------- strings
        exclusions.rule,
        exclusions.namespace,

        ---------- timestamps
        exclusions.event_ts,

        ---------- merge control: a stored link no longer cut is gone
        exclusions.tenant_id is null as _delete_row

    from exclusions
    full outer join stored_links
        on
            exclusions.tenant_id = stored_links.tenant_id
            and exclusions.smaller_identity_id = stored_links.smaller_identity_id
            and exclusions.larger_identity_id = stored_links.larger_identity_id

)

{{ merge_rows('final', tenants_to_read) }}
