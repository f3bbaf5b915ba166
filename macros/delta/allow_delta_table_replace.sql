{#- Lifts `delta.appendOnly` from a Delta table a full refresh is about to replace: Delta
    refuses to replace an append-only table (DELTA_CANNOT_MODIFY_APPEND_ONLY), and the
    replacement sets the model's own table properties again (record_notifications' among them).
    Should the replacement fail, the next incremental run sets it again
    (restore_delta_append_only). -#}
{% macro allow_delta_table_replace(relation) -%}
    {%- if delta_table_append_only(relation) -%}
        {{ log(relation ~ ": full refresh of an append-only table, lifting delta.appendOnly to replace it", info=true) }}
        {%- do run_query("alter table " ~ relation ~ " set tblproperties ('delta.appendOnly' = 'false')") -%}
    {%- endif -%}
{%- endmacro %}
