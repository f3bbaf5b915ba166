{#- Sorted by (tenant_id, identity_id) and cut into files of at most 100k rows, so each file
    holds a narrow key range and Delta's min/max statistics skip all files but one or two for a
    one-key fetch (see the docs). Rebuilt each run: the file layout is the point. -#}
{{
    config(
        tblproperties={
            'delta.dataSkippingStatsColumns': 'tenant_id,identity_id',
        },
        pre_hook="set spark.sql.files.maxRecordsPerFile = {{ var('identity_index_rows_per_file', 100000) }}",
        post_hook="reset spark.sql.files.maxRecordsPerFile",
    )
}}

with

identity_profiles as (

    select
        tenant_id,
        identity_id,
        canonical_id,
        profile_id

    from {{ ref('int_identities_mapped_to_profiles') }}

),

final as (

    select
        ---------- ids
        tenant_id,
        identity_id,
        canonical_id,
        profile_id

    from identity_profiles

)

select * from final
order by tenant_id, identity_id
