{#- Per stream and landing file: lines landed, accepted and quarantined, each counted from its
    own table, so that `lines_landed = lines_accepted + lines_quarantined` is a real check.
    Landed lines count from the batches the staging model has read: lines staged after it read
    the landing table (by an ingest appending meanwhile) are the next run's. -#}

with

landed_lines as (

    {% for stream in landing_streams() -%}
        select
            '{{ stream }}' as stream,
            tenant_id,
            ingest_batch_id,
            source_file,
            ingested_at

        from {{ source('landing', stream) }}
        {%- if not loop.last %}

            union all

        {% endif -%}
    {% endfor %}

),

read_through as (

    {% for stream, staging_model in landing_streams().items() -%}
        select
            '{{ stream }}' as stream,
            staged_tenant_id,
            max(ingest_batch_id) as ingest_batch_id

        from {{ ref(staging_model) }}
        group by staged_tenant_id
        {%- if not loop.last %}

            union all

        {% endif -%}
    {% endfor %}

),

accepted as (

    {% for stream, staging_model in landing_streams().items() -%}
        select
            '{{ stream }}' as stream,
            source_file,
            count(*) as lines_accepted

        from {{ ref(staging_model) }}
        where is_accepted
        group by source_file
        {%- if not loop.last %}

            union all

        {% endif -%}
    {% endfor %}

),

landed as (

    select
        landed_lines.stream,
        landed_lines.source_file,
        count(*) as lines_landed,
        max(landed_lines.ingested_at) as last_ingested_at

    from landed_lines
    inner join read_through
        on
            landed_lines.stream = read_through.stream
            and landed_lines.tenant_id = read_through.staged_tenant_id
            and landed_lines.ingest_batch_id <= read_through.ingest_batch_id
    group by landed_lines.stream, landed_lines.source_file

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
