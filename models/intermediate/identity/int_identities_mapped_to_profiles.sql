{{ config(materialized='view') }}

with

identity_map as (

    select
        tenant_id,
        identity_id,
        canonical_id

    from {{ ref('identity_map') }}

),

profile_identities as (

    select
        tenant_id,
        identity_id,
        profile_id

    from {{ ref('profile_identities') }}

),

final as (

    select
        ---------- ids
        identity_map.tenant_id,
        identity_map.identity_id,
        identity_map.canonical_id,
        profile_identities.profile_id

    from identity_map
    inner join profile_identities
        on
            identity_map.tenant_id = profile_identities.tenant_id
            and identity_map.canonical_id = profile_identities.identity_id

)

select * from final
