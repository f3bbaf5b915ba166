{#- The Delta table holding run locks: `<target schema>_control.run_locks`. -#}
{% macro run_lock_table() -%}
    {{ return(target.schema ~ '_control.run_locks') }}
{%- endmacro %}
