{#- `dbt run-operation purge_history` (what `profile-lake purge` runs): no file of the lake keeps
    what its tables no longer hold. The superseded versions of int_record_states (those every
    reader has passed) go first: an erasure folds records again, and their older versions
    still hold what it removed. -#}
{% macro purge_history() -%}
    {%- if execute -%}
        {%- set states = model_relation('int_record_states') -%}
        {%- set first = [] -%}
        {%- if adapter.get_relation(states.database, states.schema, states.identifier) is not none -%}
            {%- set readers = superseded_states_readers() -%}
            {%- do first.append(
                delete_superseded_states_sql(states, none, readers.notifications, readers.graph)
            ) -%}
        {%- endif -%}
        {%- set said = adapter.purge_history(
            target.schema,
            var('lake_home'),
            run_lock_table() if run_locks_enabled() else none,
            invocation_id,
            var('whole_lake_lock_wait_seconds', 3600),
            var('tenant_lock_lease_seconds', 600),
            first
        ) -%}
        {%- for line in said -%}
            {{ log(line, info=true) }}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro %}

