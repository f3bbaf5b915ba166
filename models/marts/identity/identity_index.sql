{#- A full build sorts by (tenant_id, identity_id) and cuts files of at most 100k rows, so each
    file holds a narrow key range and Delta's min/max statistics skip all files but one or two
    for a one-key fetch; incremental runs MERGE the identities their changes reach, and the
    optimize_layouts run-operation restores the layout (docs/incremental-marts.md). -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key=['tenant_id', 'identity_id'],
        tblproperties={
            'delta.dataSkippingStatsColumns': 'tenant_id,identity_id',
            'delta.enableDeletionVectors': 'true',
            'delta.enableChangeDataFeed': 'true',
        },
        zorder_by=['tenant_id', 'identity_id'],
        pre_hook="set spark.sql.files.maxRecordsPerFile = {{ var('identity_index_rows_per_file', 100000) }}",
        post_hook=[
            "reset spark.sql.files.maxRecordsPerFile",
            "{{ record_consumed_versions() }}",
        ],
    )
}}

{%- set rename_changes = source_changes(ref('identity_map')) %}
{%- set membership_changes = source_changes(ref('profile_identities')) %}

{%- set moved_canonical_identities = recompute_keys(
    'moved_canonical_identities',
    ['tenant_id', 'identity_id'],
    changed_keys(ref('profile_identities'), membership_changes, ['tenant_id', 'identity_id']),
) %}
{#- an identity's row changes when it is renamed (identity_map) or its canonical identity
    changes profile (profile_identities) #}
{%- set changed_identities_sql -%}
select
        tenant_id,
        identity_id

    from {{ ref('identity_map') }}
    where {{ key_filter(moved_canonical_identities, ['tenant_id', 'canonical_id']) }}
    {%- if is_incremental() %}

        union

        select
            tenant_id,
            identity_id

        from {{ this }}
        where {{ key_filter(moved_canonical_identities, ['tenant_id', 'canonical_id']) }}
    {%- endif %}

    union

    {{ changed_keys(ref('identity_map'), rename_changes, ['tenant_id', 'identity_id']) }}
{%- endset %}
{%- set changed_identities = recompute_keys(
    'changed_identities', ['tenant_id', 'identity_id'], changed_identities_sql
) %}

with

changed_identities as (

    {{ changed_identities.body }}

),

identity_profiles as (

    select
        tenant_id,
        identity_id,
        canonical_id,
        profile_id

    from {{ ref('int_identities_mapped_to_profiles') }}
    where {{ key_filter(changed_identities, ['tenant_id', 'identity_id']) }}

),

final as (

    select
        ---------- ids
        changed_identities.tenant_id,
        changed_identities.identity_id,
        identity_profiles.canonical_id,
        identity_profiles.profile_id,

        ---------- merge control: an identity no longer in a profile leaves the index
        identity_profiles.identity_id is null as _delete_row

    from changed_identities
    left join identity_profiles
        on
            changed_identities.tenant_id = identity_profiles.tenant_id
            and changed_identities.identity_id = identity_profiles.identity_id

)

{{ merge_rows('final', changed_identities, order_by=['tenant_id', 'identity_id']) }}
