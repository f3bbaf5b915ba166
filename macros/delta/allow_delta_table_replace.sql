{#- Lifts `delta.appendOnly` from a Delta table a full refresh is about to replace. -#}
{% macro allow_delta_table_replace(relation) -%}
    {%- if delta_table_append_only(relation) -%}
        {{ log(relation ~ ": full refresh of an append-only table, lifting delta.appendOnly to replace it", info=true) }}
        {%- do run_query("alter table " ~ relation ~ " set tblproperties ('delta.appendOnly' = 'false')") -%}
    {%- endif -%}
{%- endmacro %}
