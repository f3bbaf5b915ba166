{{
    config(
        partition_by=['tenant_id'],
    )
}}

with

resolved_identities as (

    select
        tenant_id,
        identity_id,
        cut_links

    from {{ ref('int_profile_identities_resolved') }}
    where size(cut_links) > 0

),

cut_links as (

    select
        tenant_id,
        identity_id,
        -- one row per struct: other_id, rule, namespace, event_ts, record_id
        inline(cut_links) as (other_id, rule, namespace, event_ts, record_id)

    from resolved_identities

),

final as (

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

)

select * from final
