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
