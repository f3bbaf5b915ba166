{#- Change feed on: the monitoring marts read the lines each run staged (an append-only
    table's feed is its appended files: it costs nothing to write). No line text and no plain
    identity: a request's identity is kept only as its salted hash (SPEC.md section 7), and
    the post-hook clears the text of the landing lines it staged. -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        post_hook="{{ clear_staged_request_lines() }}",
        tblproperties={
            'delta.dataSkippingStatsColumns': 'ingest_batch_id,tenant_id,request_id',
            'delta.enableChangeDataFeed': 'true',
        },
    )
}}

with

{{ landing_checks(landing_fields(model), source('landing', 'erasures')) }},  -- noqa: RF04

erasure_salts as (

    select
        tenant_id,
        salt

    from {{ source('erasure_control', 'erasure_salts') }}

),

hashed as (

    select
        judged.*,
        case
            when size(judged.problems) = 0
                then {{ adapter.erasure_hash_sql('judged.identity', 'identity', 'erasure_salts.salt') }}
        end as identity_hash

    from judged
    left join erasure_salts
        on judged.tenant_id = erasure_salts.tenant_id

),

final as (

    select
        ---------- ids
        ingest_batch_id,
        coalesce(tenant_id, staged_tenant_id) as tenant_id,
        staged_tenant_id,
        request_id,
        identity_hash,

        ---------- strings
        source_file,
        cast(null as string) as line,
        problems,

        ---------- numbers
        line_number,

        ---------- booleans
        size(problems) = 0 as is_accepted,
        is_erased,

        ---------- timestamps
        requested_ts,
        ingested_at

    from hashed

)

select * from final
