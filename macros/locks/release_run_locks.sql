{#- on-run-end: release the locks this run holds. -#}
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
