{#- Per stream and landing file: lines landed, accepted and quarantined, each counted from its
    own table, so that `lines_landed = lines_accepted + lines_quarantined` is a real check.
    Landed lines count from the batches the staging model has read: lines staged after it read
    the landing table (by an ingest appending meanwhile) are the next run's. -#}

with

records_read_through as (

    select
        staged_tenant_id,
        max(ingest_batch_id) as ingest_batch_id

    from {{ ref('stg_records__changes') }}
    group by staged_tenant_id

),

records_landed as (

    select
        'records' as stream,
        landed_lines.source_file,
        count(*) as lines_landed,
        max(landed_lines.ingested_at) as last_ingested_at

    from {{ source('records', 'landed_lines') }} as landed_lines
    inner join records_read_through
        on
            landed_lines.tenant_id = records_read_through.staged_tenant_id
            and landed_lines.ingest_batch_id <= records_read_through.ingest_batch_id
    group by landed_lines.source_file

),

id_mutations_read_through as (

    select
        staged_tenant_id,
        max(ingest_batch_id) as ingest_batch_id

    from {{ ref('stg_id_mutations__renames') }}
    group by staged_tenant_id

),

id_mutations_landed as (

    select
        'id_mutations' as stream,
        landed_lines.source_file,
        count(*) as lines_landed,
        max(landed_lines.ingested_at) as last_ingested_at

    from {{ source('id_mutations', 'landed_lines') }} as landed_lines
    inner join id_mutations_read_through
        on
            landed_lines.tenant_id = id_mutations_read_through.staged_tenant_id
            and landed_lines.ingest_batch_id <= id_mutations_read_through.ingest_batch_id
    group by landed_lines.source_file

),

entity_names_read_through as (

    select
        staged_tenant_id,
        max(ingest_batch_id) as ingest_batch_id

    from {{ ref('stg_entity_names__updates') }}
    group by staged_tenant_id

),

entity_names_landed as (

    select
        'entity_names' as stream,
        landed_lines.source_file,
        count(*) as lines_landed,
        max(landed_lines.ingested_at) as last_ingested_at

    from {{ source('entity_names', 'landed_lines') }} as landed_lines
    inner join entity_names_read_through
        on
            landed_lines.tenant_id = entity_names_read_through.staged_tenant_id
            and landed_lines.ingest_batch_id <= entity_names_read_through.ingest_batch_id
    group by landed_lines.source_file

),

records_accepted as (

    select
        'records' as stream,
        source_file,
        count(*) as lines_accepted

    from {{ ref('stg_records__changes') }}
    where is_accepted
    group by source_file

),

id_mutations_accepted as (

    select
        'id_mutations' as stream,
        source_file,
        count(*) as lines_accepted

    from {{ ref('stg_id_mutations__renames') }}
    where is_accepted
    group by source_file

),

entity_names_accepted as (

    select
        'entity_names' as stream,
        source_file,
        count(*) as lines_accepted

    from {{ ref('stg_entity_names__updates') }}
    where is_accepted
    group by source_file

),

landed as (

    select * from records_landed
    union all
    select * from id_mutations_landed
    union all
    select * from entity_names_landed

),

accepted as (

    select * from records_accepted
    union all
    select * from id_mutations_accepted
    union all
    select * from entity_names_accepted

),

quarantined as (

    select
        stream,
        source_file,
        count(distinct line_number) as lines_quarantined,
        count(*) as problems_found

    from {{ ref('ingest_errors') }}
    group by stream, source_file

),

final as (

    select
        landed.stream,
        landed.source_file,
        landed.lines_landed,
        coalesce(accepted.lines_accepted, 0) as lines_accepted,
        coalesce(quarantined.lines_quarantined, 0) as lines_quarantined,
        coalesce(quarantined.problems_found, 0) as problems_found,
        landed.last_ingested_at

    from landed
    left join accepted
        on
            landed.stream = accepted.stream
            and landed.source_file = accepted.source_file
    left join quarantined
        on
            landed.stream = quarantined.stream
            and landed.source_file = quarantined.source_file

)

select * from final
