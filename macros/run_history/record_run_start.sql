{#- on-run-start: append the run's started event to the run history. -#}
{% macro record_run_start() -%}
    {{ return(adapter.dispatch('record_run_start', 'profile_lake')()) }}
{%- endmacro %}

{% macro default__record_run_start() -%}
    {{ return('') }}
{%- endmacro %}

{% macro profile_lake_spark__record_run_start() -%}
    {%- if execute and flags.WHICH in run_history_commands() and var('run_history', true) -%}
        {%- set scope = run_tenant_scope() -%}
        {%- do adapter.record_run_start(
            target.schema ~ '_control',
            invocation_id,
            'dbt ' ~ ('source freshness' if flags.WHICH == 'freshness' else flags.WHICH),
            target.name,
            'all' if scope is none else scope | join(','),
            var('run_history_stale_hours', 24)
        ) -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
