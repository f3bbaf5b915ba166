{#- The first version of `relation`'s change feed a run must read so that every tenant in
    its scope gets each change after its own watermark (change_feed_watermarks_sql: the
    model's newest `version_column` for that tenant, or a newer change-feed bookmark): the
    smallest, over the tenants, of the first later commit that may change the tenant's rows
    (tenant_change_versions: maintenance commits, and MERGEs tagged with other tenants, are
    passed over). One past the latest version when there is none. A tenant with no watermark
    yet starts from the oldest version in the table's history. `tenant_relations`: more tables
    whose tenants count: records' states keep tombstones, so a tenant whose records were all
    inserted and deleted before its first notification is not skipped. A tenant whose next
    version is gone from the history stops the run (check_change_feed_kept). A first build (or
    full refresh) starts at the table's latest creation or replacement (delta_table_creations),
    or, with none left in the history, at its oldest version, which must be the first
    (check_change_feed_from_creation). -#}
{% macro change_feed_start_version(relation, version_column, tenant_relations=[]) -%}
    {%- if not execute -%}
        {{ return(0) }}
    {%- endif -%}
    {%- if adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
        {{ return(0) }}
    {%- endif -%}
    {%- set history = run_query('describe history ' ~ relation) -%}
    {%- set versions = history.columns['version'].values() | map('int') | list -%}
    {%- set commits = tenant_change_versions(history, relation) -%}
    {%- set starts = [versions | max + 1] -%}
    {%- if not is_incremental() -%}
        {%- set creations = delta_table_creations(relation, history) -%}
        {%- if creations -%}
            {#- the table's rows as they are start at its latest creation or replacement -#}
            {{ return(creations | max) }}
        {%- endif -%}
        {%- do check_change_feed_from_creation(relation, versions | min) -%}
        {%- do starts.extend(commits | map(attribute='version') | list) -%}
        {{ return(starts | min) }}
    {%- endif -%}
    {%- set watermarks = run_query(change_feed_watermarks_sql(
        relation, this, version_column, tenant_relations,
        tenant_filter=in_run_tenant_scope('tenant_id'), no_watermark=(versions | min) - 1
    )) -%}
    {%- do check_change_feed_kept(relation, watermarks, versions | min) -%}
    {%- set oldest_watermark = watermarks.columns['watermark'].values() | map('int') | min
        if watermarks.rows | length > 0 else versions | max -%}
    {%- set later_commits = commits | selectattr('version', 'gt', oldest_watermark) | list -%}
    {%- for tenant in watermarks.rows -%}
        {%- for commit in later_commits
            if commit.version > tenant['watermark'] | int
            and (commit.tenants is none or tenant['tenant_id'] in commit.tenants) -%}
            {%- if loop.first -%}
                {%- do starts.append(commit.version) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(starts | min) }}
{%- endmacro %}
