{% macro restore_delta_append_only(relation, tblproperties) -%}
    {%- set wanted = (tblproperties or {}).get('delta.appendOnly') -%}
    {%- if wanted is not none and (wanted | string | lower) == 'true'
        and not delta_table_append_only(relation) -%}
        {{ log(relation ~ ": delta.appendOnly was lifted (a full refresh that did not finish?), setting it again", info=true) }}
        {%- do run_query("alter table " ~ relation ~ " set tblproperties ('delta.appendOnly' = 'true')") -%}
    {%- endif -%}
{%- endmacro %}
