{#- on-run-end: append the run's ended event and its nodes to the run history. -#}
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
