{#- Lifts `delta.appendOnly` from a Delta table a full refresh is about to replace: Delta
    refuses to replace an append-only table (DELTA_CANNOT_MODIFY_APPEND_ONLY), and the
    replacement sets the model's own table properties again (record_notifications' among them).
    Should the replacement fail, the table stays writable until the next full refresh. -#}
{% macro allow_delta_table_replace(relation) -%}
    {%- set found = run_query("show tblproperties " ~ relation ~ " ('delta.appendOnly')") -%}
    {%- if found.rows | length > 0 and (found.rows[0][1] | string | lower) == 'true' -%}
        {{ log(relation ~ ": full refresh of an append-only table, lifting delta.appendOnly to replace it", info=true) }}
        {%- do run_query("alter table " ~ relation ~ " set tblproperties ('delta.appendOnly' = 'false')") -%}
    {%- endif -%}
{%- endmacro %}
