{#- on-run-end: append this run's `ended` event (status, files ingested, lines landed,
    accepted and quarantined per stream, lag per tenant) and one row per node of dbt's
    `results` (status, rows written, seconds) to the run history. -#}
{% macro record_run_end(results) -%}
    {{ return(adapter.dispatch('record_run_end', 'profile_lake')(results)) }}
{%- endmacro %}

{% macro default__record_run_end(results) -%}
    {{ return('') }}
{%- endmacro %}

{% macro profile_lake_spark__record_run_end(results) -%}
    {%- if execute and flags.WHICH in run_history_commands() and var('run_history', true) -%}
        {%- do adapter.record_run_end(target.schema ~ '_control', target.schema, results) -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
