{#- Whether a Delta table has `delta.appendOnly` on. -#}
{% macro delta_table_append_only(relation) -%}
    {{ return((adapter.delta_table_property(relation, 'delta.appendOnly') or '') | lower == 'true') }}
{%- endmacro %}
