{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key=['tenant_id', 'identity_id'],
        partition_by=['tenant_id'],
        tblproperties={
            'delta.dataSkippingStatsColumns': 'identity_id,profile_id',
            'delta.enableChangeDataFeed': 'true',
            'delta.enableDeletionVectors': 'true',
        },
        post_hook="{{ record_consumed_versions() }}",
    )
}}

{%- set resolved_changes = source_changes(ref('int_profile_identities_resolved')) %}

with

resolved_identities as (

    select
        tenant_id,
        identity_id,
        profile_id

    from {{ ref('int_profile_identities_resolved') }}

),

{% if is_incremental() %}
    changed_identities as (

        {{ changed_keys(ref('int_profile_identities_resolved'), resolved_changes, ['tenant_id', 'identity_id']) }}

    ),
{% endif %}

final as (

    {% if is_incremental() %}
        select
            ---------- ids
            changed_identities.tenant_id,
            changed_identities.identity_id,
            resolved_identities.profile_id,

            ---------- merge control: incremental runs only, never a column of the table
            resolved_identities.identity_id is null as _delete_row

        from changed_identities
        left join resolved_identities
            on
                changed_identities.tenant_id = resolved_identities.tenant_id
                and changed_identities.identity_id = resolved_identities.identity_id
    {% else %}
        select
            ---------- ids
            tenant_id,
            identity_id,
            profile_id

        from resolved_identities
    {% endif %}

)

select * from final
