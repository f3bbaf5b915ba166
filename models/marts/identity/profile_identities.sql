{{
    config(
        partition_by=['tenant_id'],
        tblproperties={
            'delta.dataSkippingStatsColumns': 'identity_id,profile_id',
        },
    )
}}

with

resolved_identities as (

    select
        tenant_id,
        identity_id,
        profile_id

    from {{ ref('int_profile_identities_resolved') }}

),

final as (

    select
        ---------- ids
        tenant_id,
        identity_id,
        profile_id

    from resolved_identities

)

select * from final
