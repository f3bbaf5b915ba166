{#- on-run-end: release what acquire_tenant_locks and acquire_whole_lake_lock took (a run
    killed before this leaves its locks behind; the next run recovers them once the holder's
    process is gone). -#}
{% macro release_run_locks() -%}
    {{ return(adapter.dispatch('release_run_locks', 'profile_lake')()) }}
{%- endmacro %}

{% macro default__release_run_locks() -%}
    {{ return('') }}
{%- endmacro %}

{% macro profile_lake_spark__release_run_locks() -%}
    {#- whatever the command: seeds and snapshots take the whole-lake lock too -#}
    {%- if execute -%}
        {%- do adapter.release_run_locks() -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
