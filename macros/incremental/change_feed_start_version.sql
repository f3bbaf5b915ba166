{#- The first version of `relation`'s change feed a run must read so that every tenant in
    its scope gets each change after its own watermark (the model's newest `version_column`
    for that tenant). A tenant with no row in the model yet starts from the oldest version in
    the table's history. `tenant_relations`: more tables whose tenants count (see
    first_unconsumed_change_version_sql): records' states keep tombstones, so a tenant whose
    records were all inserted and deleted before its first notification is not skipped. -#}
{% macro change_feed_start_version(relation, version_column, tenant_relations=[]) -%}
    {%- if not execute -%}
        {{ return(0) }}
    {%- endif -%}
    {%- if adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
        {{ return(0) }}
    {%- endif -%}
    {%- set history = run_query('describe history ' ~ relation) -%}
    {%- set oldest_version = history.columns['version'].values() | min | int -%}
    {%- if not is_incremental() -%}
        {{ return(oldest_version) }}
    {%- endif -%}
    {%- set query = first_unconsumed_change_version_sql(
        relation, this, version_column, tenant_relations,
        tenant_filter=in_run_tenant_scope('tenant_id'), no_watermark=oldest_version - 1
    ) -%}
    {%- set found = run_query(query).columns[0].values()[0] -%}
    {{ return(oldest_version if found is none else [found | int, oldest_version] | max) }}
{%- endmacro %}
