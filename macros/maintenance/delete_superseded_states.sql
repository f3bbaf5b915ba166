{#- run-operation: delete the superseded versions of int_record_states. -#}
{% macro delete_superseded_states(tenants=none) -%}
    {%- set relation = ref('int_record_states') -%}
    {%- set readers = superseded_states_readers() -%}
    {%- set notifications = readers.notifications -%}
    {%- set graph = readers.graph -%}
    {%- set found = run_query(
        'select count(*) as superseded from ('
        ~ superseded_states_sql(relation, tenants, notifications, graph) ~ ') as superseded'
    ).rows[0]['superseded'] -%}
    {%- if found == 0 -%}
        {{ log('int_record_states: no superseded versions' ~ (' of ' ~ tenants | join(', ') if tenants else ''), info=true) }}
        {{ return(0) }}
    {%- endif -%}
    {{ log('int_record_states: deleting ' ~ found ~ ' superseded versions', info=true) }}
    {%- do run_query(delete_superseded_states_sql(relation, tenants, notifications, graph)) -%}
    {{ log('int_record_states: deleted ' ~ found ~ ' superseded versions', info=true) }}
    {{ return(found) }}
{%- endmacro %}

