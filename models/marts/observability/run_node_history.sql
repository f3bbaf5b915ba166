{{ config(materialized='view') }}

{#- One row per node of each ended run, as dbt reported it in on-run-end's results. -#}

with

run_nodes as (

    select
        run_id,
        unique_id,
        node_name,
        resource_type,
        status,
        message,
        rows_affected,
        failures,
        seconds,
        started_at,
        completed_at

    from {{ source('run_log', 'run_nodes') }}

),

final as (

    select
        ---------- ids
        run_id,
        unique_id,

        ---------- strings
        node_name,
        resource_type,
        status,
        message,

        ---------- numbers
        rows_affected,
        failures,
        seconds,

        ---------- timestamps
        started_at,
        completed_at

    from run_nodes

)

select * from final
