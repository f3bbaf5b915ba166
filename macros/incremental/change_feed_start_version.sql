{#- The first version of `relation`'s change feed a run must read so that every tenant in
    its scope gets each change after its own watermark (the model's newest `version_column`
    for that tenant). A tenant with no row in the model yet starts from the oldest version in
    the table's history. The tenants considered are those of the model, of `relation` and of
    `tenant_relations`: a tenant whose rows were all inserted and deleted from `relation`
    before the model first saw it has rows in neither, and only a table that keeps such
    tenants (records' states keep tombstones) stops its changes from being skipped. -#}
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
    {%- set query -%}
        with
        tenants as (
            select distinct tenant_id from {{ relation }} where {{ in_run_tenant_scope('tenant_id') }}
            union
            select distinct tenant_id from {{ this }} where {{ in_run_tenant_scope('tenant_id') }}
            {%- for tenant_relation in tenant_relations %}
            union
            select distinct tenant_id from {{ tenant_relation }} where {{ in_run_tenant_scope('tenant_id') }}
            {%- endfor %}
        ),
        watermarks as (
            select tenant_id, max({{ version_column }}) as watermark from {{ this }} group by tenant_id
        )
        select min(coalesce(watermarks.watermark, {{ oldest_version - 1 }})) + 1
        from tenants left join watermarks on tenants.tenant_id = watermarks.tenant_id
    {%- endset -%}
    {%- set found = run_query(query).columns[0].values()[0] -%}
    {{ return(oldest_version if found is none else [found | int, oldest_version] | max) }}
{%- endmacro %}
