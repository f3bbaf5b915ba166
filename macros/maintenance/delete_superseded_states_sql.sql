{% macro delete_superseded_states_sql(relation, tenants=none, notifications=none, graph=none) -%}
    merge into {{ relation }} as states
    using ({{ superseded_states_sql(relation, tenants, notifications, graph) }}) as superseded
        on
            states.tenant_id = superseded.tenant_id
            and states.record_id = superseded.record_id
            and states.last_ingest_batch_id = superseded.last_ingest_batch_id
            {%- if tenants %}
                {#- literal partitions: Delta then sees the MERGE touch only these tenants #}
                and states.tenant_id in ({% for tenant in tenants %}{{ sql_string_literal(tenant) }}{{ ', ' if not loop.last }}{% endfor %})
            {%- endif %}
    when matched then delete
{%- endmacro %}
