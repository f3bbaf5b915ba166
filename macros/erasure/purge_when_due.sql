{#- on-run-end: purge the lake when a purge is due (var erasure_purge_hours, docs/erasure.md), so
    no request waits for an operator. After the run's locks are released: the purge takes
    every lock. -#}
{% macro purge_when_due() -%}
    {%- if execute and flags.WHICH in ('run', 'build')
        and adapter.erasure_purge_due(target.schema, var('lake_home'), var('erasure_purge_hours')) -%}
        {{ log('erasure: a purge is due (var erasure_purge_hours): purging the lake', info=true) }}
        {%- do purge_history() -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
