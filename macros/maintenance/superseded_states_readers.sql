{#- The readers of int_record_states' versions that delete_superseded_states must not pass:
    record_notifications, and the identity graph once it stamps its batch watermark (none for
    a reader not built). -#}
{% macro superseded_states_readers() -%}
    {%- set notifications = model_relation('record_notifications') -%}
    {%- if adapter.get_relation(notifications.database, notifications.schema, notifications.identifier) is none -%}
        {%- set notifications = none -%}
    {%- endif -%}
    {%- set graph = model_relation('int_profile_identities_resolved') -%}
    {%- set graph_relation = adapter.get_relation(graph.database, graph.schema, graph.identifier) -%}
    {%- if graph_relation is none
        or 'records_batch_id' not in adapter.get_columns_in_relation(graph_relation) | map(attribute='name') | list -%}
        {#- no graph, or one from before its batch watermark: its next run resolves whole -#}
        {%- set graph = none -%}
    {%- endif -%}
    {{ return({'notifications': notifications, 'graph': graph}) }}
{%- endmacro %}
