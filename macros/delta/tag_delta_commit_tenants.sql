{#- Tags the session's next Delta commits with the only tenants they can change, as commit
    userMetadata `{"table": "<schema>.<table>", "tenants": [...]}` (DESCRIBE HISTORY shows it),
    until untag_delta_commits. merge_with_deletes tags its MERGE with the tenants of its source
    when the model sets `tag_commits_with_tenants` (records does):
    a reader of the change feed (change_feed_start_version) then passes over the commits of
    other tenants, so a tenant without changes for longer than Delta keeps removed files does
    not make a read start at an unreadable version. The table is named because the setting is
    the session's: a commit of another table made meanwhile carries the tag too, and readers
    trust a tag only on the table it names. -#}
{% macro tag_delta_commit_tenants(relation, tenants) -%}
    {%- set tag = {'table': relation.schema ~ '.' ~ relation.identifier, 'tenants': tenants | sort} -%}
    {%- do run_query('set spark.databricks.delta.commitInfo.userMetadata = ' ~ tojson(tag)) -%}
{%- endmacro %}
