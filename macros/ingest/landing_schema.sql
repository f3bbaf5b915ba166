{#- The schema of the landing (staged lines) tables: `<target schema>_landing`. -#}
{% macro landing_schema() -%}
    {{ return(target.schema ~ '_landing') }}
{%- endmacro %}
