{#- `text` as a Spark SQL string literal (quotes and backslashes escaped). -#}
{% macro sql_string_literal(text) -%}
    '{{ text | string | replace("\\", "\\\\") | replace("'", "\\'") }}'
{%- endmacro %}
