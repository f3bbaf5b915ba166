{#- pre-hook of every node that rebuilds a table of every tenant (seeds, identity, marts,
    monitoring), and called by the incremental materialization before it builds a table from
    scratch: the first one of a run takes the `whole-lake` lock, held until on-run-end, so two
    runs never rebuild such tables at once (their Delta commits would conflict, and the later
    one fail or replace the other's rows). Runs of different tenants still process their
    tenants side by side up to that point. A run finding it held waits up to var
    whole_lake_lock_wait_seconds, printing the holder, then stops with an error naming it. -#}
{% macro acquire_whole_lake_lock() -%}
    {{ return(adapter.dispatch('acquire_whole_lake_lock', 'profile_lake')()) }}
{%- endmacro %}

{% macro default__acquire_whole_lake_lock() -%}
    {{ return('') }}
{%- endmacro %}

{% macro profile_lake_spark__acquire_whole_lake_lock() -%}
    {%- if execute and flags.WHICH in ('run', 'build', 'seed', 'snapshot') and run_locks_enabled() -%}
        {%- do adapter.acquire_whole_lake_lock(
            run_lock_table(),
            invocation_id,
            'dbt ' ~ flags.WHICH,
            var('whole_lake_lock_wait_seconds', 3600),
            var('tenant_lock_lease_seconds', 600)
        ) -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
