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
