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
