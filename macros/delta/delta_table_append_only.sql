{#- Whether a Delta table has `delta.appendOnly` on. -#}
{% macro delta_table_append_only(relation) -%}
    {%- set found = run_query("show tblproperties " ~ relation ~ " ('delta.appendOnly')") -%}
    {{ return(found.rows | length > 0 and (found.rows[0][1] | string | lower) == 'true') }}
{%- endmacro %}
