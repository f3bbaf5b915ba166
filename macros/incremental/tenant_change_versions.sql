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
