{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        tblproperties={
            'delta.dataSkippingStatsColumns': 'ingest_batch_id,tenant_id,stream,error_code,ingested_at',
        },
    )
}}

with

records_quarantined as (

    select
        tenant_id,
        'records' as stream,
        source_file,
        line_number,
        problems,
        line,
        ingest_batch_id,
        ingested_at

    from {{ ref('stg_records__changes') }}
    where
        not is_accepted
        and {{ in_run_tenant_scope('tenant_id') }}
        and ingest_batch_id > {{ batch_watermark(condition="stream = 'records'") }}

),

id_mutations_quarantined as (

    select
        tenant_id,
        'id_mutations' as stream,
        source_file,
        line_number,
        problems,
        line,
        ingest_batch_id,
        ingested_at

    from {{ ref('stg_id_mutations__renames') }}
    where
        not is_accepted
        and {{ in_run_tenant_scope('tenant_id') }}
        and ingest_batch_id > {{ batch_watermark(condition="stream = 'id_mutations'") }}

),

entity_names_quarantined as (

    select
        tenant_id,
        'entity_names' as stream,
        source_file,
        line_number,
        problems,
        line,
        ingest_batch_id,
        ingested_at

    from {{ ref('stg_entity_names__updates') }}
    where
        not is_accepted
        and {{ in_run_tenant_scope('tenant_id') }}
        and ingest_batch_id > {{ batch_watermark(condition="stream = 'entity_names'") }}

),

quarantined as (

    select * from records_quarantined
    union all
    select * from id_mutations_quarantined
    union all
    select * from entity_names_quarantined

),

one_row_per_problem as (

    select
        tenant_id,
        stream,
        source_file,
        line_number,
        inline(problems) as (stage, error_code, field, error_message),
        line,
        ingest_batch_id,
        ingested_at

    from quarantined

),

final as (

    select
        ---------- ids
        tenant_id,
        ingest_batch_id,

        ---------- strings
        stream,
        source_file,
        stage,
        error_code,
        field,
        error_message,
        line,

        ---------- numbers
        line_number,

        ---------- timestamps
        ingested_at

    from one_row_per_problem

)

select * from final
