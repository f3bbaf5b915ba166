{#- Per tenant and landing batch: the lines landed, and of the lines staged the accepted ones and
    their newest event_ts. A run recounts the batches landed since its last run and those its
    staged lines reach (a run of other tenants stages a batch's lines of this tenant later), so
    `tenant_lag` measures a tenant from its few batch rows, not from its whole partitions. -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key=['tenant_id', 'ingest_batch_id'],
        tblproperties={'delta.enableChangeDataFeed': 'true'},
        post_hook="{{ record_consumed_versions() }}",
    )
}}

-- depends_on: {{ ref('int_erasure_rewrites') }}
{#- after an erasure's rewrite of staged lines (an erased line is no longer accepted): the
    run's rewrite shows in the feed read here -#}
{%- set staged_changes = source_changes(ref('stg_records__changes')) %}
{%- set landed_through = none %}
{%- set read_landing = execute and model.resource_type != 'unit_test' and not skip_unchanged() %}
{%- if read_landing and load_relation(source('landing', 'records')) is not none %}
    {%- set landed_through = run_query(
        'select coalesce(max(ingest_batch_id), -1) from ' ~ source('landing', 'records')
    ).columns[0].values()[0] %}
{%- endif %}
{%- set counted_through = swap_stamp('landed_batch', landed_through) %}
{%- set count_every_batch = staged_changes.kind == 'all' or counted_through is none %}
{#- counting every batch, the keys are every batch landed or staged #}
{%- set landed_after = -1 if count_every_batch else counted_through %}
{%- set batches_sql -%}
select
        tenant_id,
        ingest_batch_id
    from {{ source('landing', 'records') }}
    where ingest_batch_id > {{ landed_after }}

    union

    {{ changed_keys(ref('stg_records__changes'), staged_changes, ['tenant_id', 'ingest_batch_id']) }}
{%- endset %}
{%- set batches_to_count = recompute_keys(
    'batches_to_count', ['tenant_id', 'ingest_batch_id'], batches_sql, every=count_every_batch
) %}

with

batches_to_count as (

    {{ batches_to_count.body }}

),

landed_lines as (

    select
        tenant_id,
        ingest_batch_id

    from {{ source('landing', 'records') }}
    where {{ key_filter(batches_to_count, ['tenant_id', 'ingest_batch_id']) }}

),

staged_lines as (

    select
        tenant_id,
        ingest_batch_id,
        is_accepted,
        event_ts

    from {{ ref('stg_records__changes') }}
    where {{ key_filter(batches_to_count, ['tenant_id', 'ingest_batch_id']) }}

),

landed_counts as (

    select
        tenant_id,
        ingest_batch_id,
        count(*) as landed_lines

    from landed_lines
    group by tenant_id, ingest_batch_id

),

staged_counts as (

    select
        tenant_id,
        ingest_batch_id,
        count(*) as staged_lines,
        count_if(is_accepted) as accepted_lines,
        max(case when is_accepted then event_ts end) as newest_accepted_event_ts

    from staged_lines
    group by tenant_id, ingest_batch_id

),

final as (

    select
        ---------- ids
        batches_to_count.tenant_id,
        batches_to_count.ingest_batch_id,

        ---------- numbers
        coalesce(landed_counts.landed_lines, 0) as landed_lines,
        coalesce(staged_counts.staged_lines, 0) as staged_lines,
        coalesce(staged_counts.accepted_lines, 0) as accepted_lines,

        ---------- timestamps
        staged_counts.newest_accepted_event_ts,

        ---------- merge control: a batch with no line left is gone
        landed_counts.tenant_id is null and staged_counts.tenant_id is null as _delete_row

    from batches_to_count
    left join landed_counts
        on
            batches_to_count.tenant_id = landed_counts.tenant_id
            and batches_to_count.ingest_batch_id = landed_counts.ingest_batch_id
    left join staged_counts
        on
            batches_to_count.tenant_id = staged_counts.tenant_id
            and batches_to_count.ingest_batch_id = staged_counts.ingest_batch_id

)

{{ merge_rows('final', batches_to_count) }}
