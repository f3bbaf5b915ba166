{#- A full build sorts by (tenant_id, identity_id) and cuts files of at most 100k rows, so each
    file holds a narrow key range and Delta's min/max statistics skip all files but one or two
    for a one-key fetch; incremental runs MERGE the identities their changes reach, and the
    optimize_table run-operation restores the layout (docs/incremental-marts.md). -#}
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

{% if is_incremental() %}
    {#- an identity's row changes when it is renamed (identity_map) or its canonical identity
        changes profile (profile_identities) -#}
    {% set changed_identities_sql %}
        with moved_canonical_identities as (
            {{ changed_keys(ref('profile_identities'), membership_changes, ['tenant_id', 'identity_id']) }}
        )
        {{ changed_keys(ref('identity_map'), rename_changes, ['tenant_id', 'identity_id']) }}
        union
        select renamed.tenant_id, renamed.identity_id
        from {{ ref('identity_map') }} as renamed
        left semi join moved_canonical_identities as moved
            on renamed.tenant_id = moved.tenant_id and renamed.canonical_id = moved.identity_id
        union
        select indexed.tenant_id, indexed.identity_id
        from {{ this }} as indexed
        left semi join moved_canonical_identities as moved
            on indexed.tenant_id = moved.tenant_id and indexed.canonical_id = moved.identity_id
    {% endset %}
    {%- set changed_identities = cached_query('changed_identities', changed_identities_sql) %}
{% endif %}

with

{% if is_incremental() %}
    changed_identities as (

        select
            tenant_id,
            identity_id

        from {{ changed_identities }}

    ),
{% endif %}

identity_profiles as (

    select
        tenant_id,
        identity_id,
        canonical_id,
        profile_id

    from {{ ref('int_identities_mapped_to_profiles') }}
    {% if is_incremental() -%}
        where (tenant_id, identity_id) in (select tenant_id, identity_id from changed_identities)
    {%- endif %}

),

final as (

    select
        ---------- ids
        tenant_id,
        identity_id,
        canonical_id,
        profile_id

    {%- if is_incremental() %},

            ---------- merge control: incremental runs only, never a column of the table
            false as _delete_row
        {%- endif %}

    from identity_profiles

){% if is_incremental() %},

    {#- an identity no longer in a profile leaves the index -#}
    removed_identities as (

        select
            changed_identities.tenant_id,
            changed_identities.identity_id,
            cast(null as string) as canonical_id,
            cast(null as string) as profile_id,
            true as _delete_row

        from changed_identities
        left anti join identity_profiles
            on
                changed_identities.tenant_id = identity_profiles.tenant_id
                and changed_identities.identity_id = identity_profiles.identity_id

    )
{% endif %}

select * from final
{%- if is_incremental() %}

    union all

    select * from removed_identities
{%- endif %}
{%- if not is_incremental() %}
    order by tenant_id, identity_id
{%- endif %}
