{#- `dbt run-operation purge_history` (what `profile-lake purge` runs): no file of the lake keeps what its tables no longer hold. -#}
{% macro purge_history() -%}
    {%- if execute -%}
        {%- set said = adapter.purge_history(
            target.schema,
            var('lake_home'),
            run_lock_table() if run_locks_enabled() else none,
            invocation_id,
            var('whole_lake_lock_wait_seconds', 3600),
            var('tenant_lock_lease_seconds', 600)
        ) -%}
        {%- for line in said -%}
            {{ log(line, info=true) }}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro %}
