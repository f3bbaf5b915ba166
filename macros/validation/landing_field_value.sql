{#- Convert stage, per field: the typed value when its state is 'ok', else null. Timestamps
    with a zone become UTC timestamps; objects stay as (compact, key-sorted) JSON text. -#}
{% macro landing_field_value(field) -%}
    {%- set raw = field.name ~ '__raw' -%}
    {%- set types = {
        'string': "variant_get(" ~ raw ~ ", '$', 'string')",
        'integer': "variant_get(" ~ raw ~ ", '$', 'bigint')",
        'timestamp': "cast(variant_get(" ~ raw ~ ", '$', 'string') as timestamp)",
        'string_array': "variant_get(" ~ raw ~ ", '$', 'array<string>')",
        'object': "to_json(" ~ raw ~ ")",
    } -%}
    case when {{ field.name }}__state = 'ok' then {{ types[field.json_type] }} end
{%- endmacro %}
