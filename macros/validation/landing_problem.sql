{#- One entry of a line's problem list, in the standard error schema. -#}
{% macro landing_problem(stage, error_code, field_name, message_sql) -%}
named_struct(
    'stage', '{{ stage }}',
    'error_code', '{{ error_code }}',
    'field', {{ "'" ~ field_name ~ "'" if field_name else 'cast(null as string)' }},
    'error_message', {{ message_sql }}
)
{%- endmacro %}
