{#- Per stream and landing file: lines landed, accepted, quarantined and erased, each counted
    from its own table, so that `lines_landed = lines_accepted + lines_quarantined +
    lines_erased` is a real check (an erasure's rewrite of staged lines, int_erasure_rewrites,
    shows in the feeds read here, so its files are recounted).
    Landed lines count from the batches the staging model has read: lines staged after it read
    the landing table (by an ingest appending meanwhile) are the next run's. Incremental runs
    recount the files the staging models staged lines of, or ingest_errors recorded problems
    of, since the last run (a file lands in one ingest batch, so its batch bounds every read). -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key=['stream', 'source_file'],
        tblproperties={
            'delta.enableDeletionVectors': 'true',
            'delta.enableChangeDataFeed': 'true',
        },
        post_hook="{{ record_consumed_versions() }}",
    )
}}

-- depends_on: {{ ref('int_erasure_rewrites') }}
{%- set staged_changes = {} %}
{%- for stream, staging_model in landing_streams().items() %}
    {%- do staged_changes.update({stream: source_changes(ref(staging_model))}) %}
{%- endfor %}
{#- a tenant-scoped run may stage a tenant's lines before the run that records their problems -#}
{%- set error_changes = source_changes(ref('ingest_errors')) %}
{%- set read_changes = staged_changes.values() | list + [error_changes] %}
{%- set unreadable_changes = read_changes | selectattr('kind', 'equalto', 'all') | list %}
{%- set recount_every_file = not is_incremental() or unreadable_changes %}

{#- the files to recount: those with lines staged or problems recorded since the last run; a
    file lands in one ingest batch, so its batch bounds every read below #}
{%- set touched_files_sql -%}
select distinct
        stream,
        source_file,
        ingest_batch_id
    from {{ changed_rows(ref('ingest_errors'), error_changes) }}
    {%- for stream, staging_model in landing_streams().items() %}

        union

        select distinct
            '{{ stream }}' as stream,
            source_file,
            ingest_batch_id
        from {{ changed_rows(ref(staging_model), staged_changes[stream]) }}
    {%- endfor %}
{%- endset %}
{%- set touched_files = recompute_keys(
    'touched_files', ['stream', 'source_file', 'ingest_batch_id'], touched_files_sql, every=recount_every_file
) %}
{%- set touched_batches = recompute_keys(
    'touched_batches',
    ['ingest_batch_id'],
    'select distinct ingest_batch_id from (' ~ touched_files_sql ~ ')',
    every=recount_every_file,
) %}

with

touched_files as (

    {{ touched_files.body }}

),

landed_lines as (

    {% for stream in landing_streams() -%}
        select
            '{{ stream }}' as stream,
            tenant_id,
            ingest_batch_id,
            source_file,
            ingested_at

        from {{ source('landing', stream) }}
        where {{ key_filter(touched_files, [sql_string_literal(stream) | trim, 'source_file', 'ingest_batch_id']) }}
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
        {#- a tenant's batch is staged whole, in order: its touched batches tell as much #}
        where {{ key_filter(touched_batches, ['ingest_batch_id']) }}
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
            count_if(is_accepted) as lines_accepted,
            count_if(coalesce(is_erased, false)) as lines_erased

        from {{ ref(staging_model) }}
        where
            {{ key_filter(touched_files, [sql_string_literal(stream) | trim, 'source_file', 'ingest_batch_id']) }}
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
    left semi join touched_files
        on
            landed_lines.stream = touched_files.stream
            and landed_lines.source_file = touched_files.source_file
    group by landed_lines.stream, landed_lines.source_file

),

quarantined as (

    select
        stream,
        source_file,
        count(distinct line_number) as lines_quarantined,
        count(*) as problems_found

    from {{ ref('ingest_errors') }}
    where {{ key_filter(touched_files, ['stream', 'source_file', 'ingest_batch_id']) }}
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
        coalesce(accepted.lines_erased, 0) as lines_erased,
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
