{#- The Delta table holding run locks: `<target schema>_control.run_locks`. -#}
{% macro run_lock_table() -%}
    {{ return(target.schema ~ '_control.run_locks') }}
{%- endmacro %}

{#- Whether runs take locks: var run_locks (`auto`: when the metastore can be shared by
    several processes; an embedded Derby metastore admits one process, which needs none). -#}
{% macro run_locks_enabled() -%}
    {%- set setting = var('run_locks', 'auto') -%}
    {%- if setting == 'auto' -%}
        {{ return(adapter.metastore_is_shared()) }}
    {%- endif -%}
    {{ return(setting in (true, 'true', 'on')) }}
{%- endmacro %}

{#- on-run-start, after the ingest: hold the lock of every tenant this run processes (var
    tenants; all of them by default) until on-run-end, so that one run at a time writes a
    tenant. A run finding a tenant locked waits up to var tenant_lock_wait_seconds, printing
    who holds it, then stops with an error naming the tenant and the holder. -#}
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

{#- on-run-end: release what acquire_tenant_locks took (a run killed before this leaves its
    lock behind; the next run recovers it once the holder's process is gone). -#}
{% macro release_tenant_locks() -%}
    {{ return(adapter.dispatch('release_tenant_locks', 'profile_lake')()) }}
{%- endmacro %}

{% macro default__release_tenant_locks() -%}
    {{ return('') }}
{%- endmacro %}

{% macro profile_lake_spark__release_tenant_locks() -%}
    {%- if execute and flags.WHICH in ('run', 'build') -%}
        {%- do adapter.release_tenant_locks() -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
