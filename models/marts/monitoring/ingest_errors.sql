{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        tblproperties={
            'delta.dataSkippingStatsColumns': 'ingest_batch_id,tenant_id,stream,error_code,ingested_at',
        },
    )
}}

{%- set streams = {
    'records': 'stg_records__changes',
    'id_mutations': 'stg_id_mutations__renames',
    'entity_names': 'stg_entity_names__updates',
} %}

with

{% for stream, staging_model in streams.items() %}
{{ stream }}_quarantined as (

    select
        tenant_id,
        '{{ stream }}' as stream,
        source_file,
        line_number,
        problems,
        line,
        ingest_batch_id,
        ingested_at

    from {{ ref(staging_model) }}
    where
        not is_accepted
        {%- if is_incremental() %}
        and ingest_batch_id > (
            select coalesce(max(ingest_batch_id), -1) from {{ this }}
            where stream = '{{ stream }}'
        )
        {%- endif %}

),

{% endfor %}
quarantined as (

    {% for stream in streams -%}
    select * from {{ stream }}_quarantined
    {% if not loop.last %}union all
    {% endif -%}
    {%- endfor %}

),

one_row_per_problem as (

    select
        quarantined.tenant_id,
        quarantined.stream,
        quarantined.source_file,
        quarantined.line_number,
        problem.stage,
        problem.error_code,
        problem.field,
        problem.error_message,
        quarantined.line,
        quarantined.ingest_batch_id,
        quarantined.ingested_at

    from quarantined
    lateral view explode(quarantined.problems) exploded as problem

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
