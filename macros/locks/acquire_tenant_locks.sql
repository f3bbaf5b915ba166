{#- on-run-start, after the ingest: hold the locks of the run's tenants. -#}
{% macro acquire_tenant_locks() -%}
    {{ return(adapter.dispatch('acquire_tenant_locks', 'profile_lake')()) }}
{%- endmacro %}

{% macro default__acquire_tenant_locks() -%}
    {{ exceptions.raise_compiler_error(
        "acquire_tenant_locks needs the profile_lake_spark adapter; target '" ~ target.name
        ~ "' is of type '" ~ target.type ~ "'."
    ) }}
{%- endmacro %}

{% macro profile_lake_spark__acquire_tenant_locks() -%}
    {%- if execute and flags.WHICH in ('run', 'build') and run_locks_enabled() -%}
        {%- do adapter.acquire_tenant_locks(
            run_lock_table(),
            run_tenant_scope(),
            invocation_id,
            'dbt ' ~ flags.WHICH,
            var('tenant_lock_wait_seconds', 300),
            var('tenant_lock_lease_seconds', 600)
        ) -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
