{#- run-operation: delete the versions of int_record_states a newer one supersedes, once
    record_notifications has read past them (it reads what each version changed). -#}
{% macro delete_superseded_states(tenants=none) -%}
    {%- set relation = ref('int_record_states') -%}
    {%- set notifications = ref('record_notifications') -%}
    {%- set notified = adapter.get_relation(
        notifications.database, notifications.schema, notifications.identifier
    ) is not none -%}
    {%- set tenant_list -%}
        {% for tenant in tenants or [] %}{{ sql_string_literal(tenant) }}{{ ', ' if not loop.last }}{% endfor %}
    {%- endset -%}
    {%- set superseded -%}
        select tenant_id, record_id, last_ingest_batch_id
        from (
            select
                tenant_id,
                record_id,
                last_ingest_batch_id,
                max(last_ingest_batch_id) over (partition by tenant_id, record_id) as newest_batch_id
            from {{ relation }}
            {%- if tenants %}
            where tenant_id in ({{ tenant_list }})
            {%- endif %}
        )
        where
            last_ingest_batch_id < newest_batch_id
            {%- if notified %}
            {#- a version not yet notified stays: the next notification starts from it #}
            and last_ingest_batch_id <= coalesce(
                (
                    select map_from_entries(collect_list(struct(tenant_id, notified_batch_id)))
                    from (
                        select tenant_id, max(ingest_batch_id) as notified_batch_id
                        from {{ notifications }}
                        group by tenant_id
                    )
                )[tenant_id],
                -1
            )
            {%- endif %}
    {%- endset -%}
    {%- set found = run_query('select count(*) as superseded from (' ~ superseded ~ ')').rows[0]['superseded'] -%}
    {%- if found == 0 -%}
        {{ log('int_record_states: no superseded versions' ~ (' of ' ~ tenants | join(', ') if tenants else ''), info=true) }}
        {{ return(0) }}
    {%- endif -%}
    {{ log('int_record_states: deleting ' ~ found ~ ' superseded versions', info=true) }}
    {%- set statement -%}
        merge into {{ relation }} as states
        using ({{ superseded }}) as superseded
        on
            states.tenant_id = superseded.tenant_id
            and states.record_id = superseded.record_id
            and states.last_ingest_batch_id = superseded.last_ingest_batch_id
            {%- if tenants %}
            {#- literal partitions: Delta then sees the MERGE touch only these tenants #}
            and states.tenant_id in ({{ tenant_list }})
            {%- endif %}
        when matched then delete
    {%- endset -%}
    {%- do run_query(statement) -%}
    {{ log('int_record_states: deleted ' ~ found ~ ' superseded versions', info=true) }}
    {{ return(found) }}
{%- endmacro %}
