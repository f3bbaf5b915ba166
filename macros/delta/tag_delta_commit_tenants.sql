{% macro tag_delta_commit_tenants(relation, tenants) -%}
    {%- set tag = {'table': relation.schema ~ '.' ~ relation.identifier, 'tenants': tenants | sort} -%}
    {%- do run_query('set spark.databricks.delta.commitInfo.userMetadata = ' ~ tojson(tag)) -%}
{%- endmacro %}
