{#- An incremental run of a model configured append-only (`delta.appendOnly` in its
    tblproperties) sets the property again if its table lost it: a full refresh lifts it before
    replacing the table (allow_delta_table_replace), and a replacement that failed after the
    lift leaves the table writable. dbt sets table properties only when it creates a table.
    Commits nothing when the property is there, so a run with nothing new stays version-free. -#}
{% macro restore_delta_append_only(relation, tblproperties) -%}
    {%- set wanted = (tblproperties or {}).get('delta.appendOnly') -%}
    {%- if wanted is not none and (wanted | string | lower) == 'true'
        and not delta_table_append_only(relation) -%}
        {{ log(relation ~ ": delta.appendOnly was lifted (a full refresh that did not finish?), setting it again", info=true) }}
        {%- do run_query("alter table " ~ relation ~ " set tblproperties ('delta.appendOnly' = 'true')") -%}
    {%- endif -%}
{%- endmacro %}
