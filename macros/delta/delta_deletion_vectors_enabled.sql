{#- Whether a Delta table writes deletion vectors (`delta.enableDeletionVectors`). -#}
{% macro delta_deletion_vectors_enabled(relation) -%}
    {%- set found = run_query("show tblproperties " ~ relation ~ " ('delta.enableDeletionVectors')") -%}
    {{ return(found.rows | length > 0 and (found.rows[0][1] | string | lower) == 'true') }}
{%- endmacro %}
