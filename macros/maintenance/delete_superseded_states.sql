{#- run-operation: delete the superseded versions of int_record_states. -#}
{% macro delete_superseded_states(tenants=none) -%}
    {%- set relation = ref('int_record_states') -%}
    {%- set notifications = ref('record_notifications') -%}
    {%- if adapter.get_relation(notifications.database, notifications.schema, notifications.identifier) is none -%}
        {%- set notifications = none -%}
    {%- endif -%}
    {%- set graph = ref('int_profile_identities_resolved') -%}
    {%- set graph_relation = adapter.get_relation(graph.database, graph.schema, graph.identifier) -%}
    {%- if graph_relation is none
        or 'records_batch_id' not in adapter.get_columns_in_relation(graph_relation) | map(attribute='name') | list -%}
        {#- no graph, or one from before its batch watermark: its next run resolves whole -#}
        {%- set graph = none -%}
    {%- endif -%}
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
