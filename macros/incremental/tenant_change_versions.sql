{#- The commits of a Delta table's `history` (the agate table of DESCRIBE HISTORY of
    `relation`) that may change rows, oldest first, as {version, tenants}: `tenants` lists the
    only tenants a commit can change when it says so (tag_delta_commit_tenants, on the MERGEs
    of merge_with_deletes), none when any. Maintenance commits (OPTIMIZE, REORG, VACUUM,
    table properties) have no change-feed rows and are left out, so a read need not start at
    one. The same operations as profile_lake/change_feed.py leaves out for the Python models. -#}
{% macro tenant_change_versions(history, relation) -%}
    {%- set maintenance = [
        'OPTIMIZE', 'REORG', 'VACUUM START', 'VACUUM END', 'SET TBLPROPERTIES', 'UNSET TBLPROPERTIES'
    ] -%}
    {%- set table_key = relation.schema ~ '.' ~ relation.identifier -%}
    {%- set commits = [] -%}
    {%- for row in history.rows | sort(attribute='version') if row['operation'] not in maintenance -%}
        {%- set tag = fromjson(row['userMetadata']) if row['userMetadata'] else none -%}
        {%- set tenants = tag['tenants'] if tag is mapping and tag.get('table') == table_key else none -%}
        {%- do commits.append({'version': row['version'] | int, 'tenants': tenants}) -%}
    {%- endfor -%}
    {{ return(commits) }}
{%- endmacro %}
