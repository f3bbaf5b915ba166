{#- Ends tag_delta_commit_tenants: the session's later Delta commits carry no userMetadata. -#}
{% macro untag_delta_commits() -%}
    {%- do run_query('reset spark.databricks.delta.commitInfo.userMetadata') -%}
{%- endmacro %}
