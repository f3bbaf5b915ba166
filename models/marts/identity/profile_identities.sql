{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key=['tenant_id', 'identity_id'],
        partition_by=['tenant_id'],
        zorder_by=['identity_id'],
        tblproperties={
            'delta.dataSkippingStatsColumns': 'identity_id,profile_id',
            'delta.enableChangeDataFeed': 'true',
            'delta.enableDeletionVectors': 'true',
        },
        post_hook="{{ record_consumed_versions() }}",
    )
}}

{%- set resolved_changes = source_changes(ref('int_profile_identities_resolved')) %}
{%- set changed_identities = recompute_keys(
    'changed_identities',
    ['tenant_id', 'identity_id'],
    changed_keys(ref('int_profile_identities_resolved'), resolved_changes, ['tenant_id', 'identity_id']),
) %}

with

changed_identities as (

    {{ changed_identities.body }}

),

resolved_identities as (

    select
        tenant_id,
        identity_id,
        profile_id

    from {{ ref('int_profile_identities_resolved') }}
    where {{ key_filter(changed_identities, ['tenant_id', 'identity_id']) }}

),

final as (

    select
        ---------- ids
        changed_identities.tenant_id,
        changed_identities.identity_id,
        resolved_identities.profile_id,

        ---------- merge control: an identity no longer in the graph is gone
        resolved_identities.identity_id is null as _delete_row

    from changed_identities
    left join resolved_identities
        on
            changed_identities.tenant_id = resolved_identities.tenant_id
            and changed_identities.identity_id = resolved_identities.identity_id

)

{{ merge_rows('final', changed_identities) }}
