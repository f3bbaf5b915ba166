{#- Whether a Delta table writes deletion vectors (`delta.enableDeletionVectors`). -#}
{% macro delta_deletion_vectors_enabled(relation) -%}
    {{ return((adapter.delta_table_property(relation, 'delta.enableDeletionVectors') or '') | lower == 'true') }}
{%- endmacro %}
