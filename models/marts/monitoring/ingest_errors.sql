{#- Change feed on: ingest_file_accounting reads the problems each run records (an
    append-only table's feed is its appended files: it costs nothing to write). -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        tblproperties={
            'delta.dataSkippingStatsColumns': 'ingest_batch_id,tenant_id,stream,error_code,ingested_at',
            'delta.enableChangeDataFeed': 'true',
        },
    )
}}

with

quarantined as (

    {% for stream, staging_model in landing_streams().items() -%}
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
            and {{ in_run_tenant_scope('tenant_id') }}
            and ingest_batch_id > {{ batch_watermark(condition="stream = '" ~ stream ~ "'") }}
        {%- if not loop.last %}

            union all

        {% endif -%}
    {% endfor %}

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
