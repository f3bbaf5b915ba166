{#- Where a reader of `relation`'s change feed starts (profile_lake.change_feed decides). -#}
{% macro change_feed_start_version(relation, version_column, tenant_relations=[]) -%}
    {%- if not execute -%}
        {{ return(0) }}
    {%- endif -%}
    {%- if adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
        {{ return(0) }}
    {%- endif -%}
    {%- set history = run_query('describe history ' ~ relation) -%}
    {%- set watermarks = none -%}
    {%- if is_incremental() -%}
        {%- set oldest_version = history.columns['version'].values() | map('int') | min -%}
        {%- set watermarks = run_query(change_feed_watermarks_sql(
            relation, this, version_column, tenant_relations,
            tenant_filter=in_run_tenant_scope('tenant_id'), no_watermark=oldest_version - 1
        )) -%}
    {%- endif -%}
    {{ return(adapter.change_feed_start_version(
        relation | string, relation.schema ~ '.' ~ relation.identifier, this.identifier,
        history, watermarks, var('accept_change_feed_gaps', [])
    )) }}
{%- endmacro %}
