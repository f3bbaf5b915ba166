{#- Convert stage: the typed value of one landing field. -#}
{% macro landing_field_value(field, guarded=true) -%}
    {%- set raw = field.name ~ '__raw' -%}
    {%- set text = "variant_get(" ~ raw ~ ", '$', 'string')" -%}
    {#- Spark reads ISO-8601 only with seconds, a dot before the fraction and upper-case T and
        Z; var iso_timestamp_pattern also lets through the rest of what ISO-8601 and RFC 3339
        allow (hh:mm without seconds, a decimal comma, lower-case t and z), so those are
        rewritten first. -#}
    {%- set iso_text = "regexp_replace(replace(upper(" ~ text ~ "), ',', '.'), "
        ~ "'^([0-9]{4}-[0-9]{2}-[0-9]{2})[T ]([0-9]{2}:[0-9]{2})([Z+-])', '$1T$2:00$3')" -%}
    {%- set types = {
        'string': text,
        'integer': "variant_get(" ~ raw ~ ", '$', 'bigint')",
        'timestamp': "try_cast(" ~ iso_text ~ " as timestamp)",
        'string_array': "variant_get(" ~ raw ~ ", '$', 'array<string>')",
        'object': "to_json(" ~ raw ~ ")",
    } -%}
    {%- if guarded -%}
    case when {{ field.name }}__state = 'ok' then {{ types[field.json_type] }} end
    {%- else -%}
    {{ types[field.json_type] }}
    {%- endif -%}
{%- endmacro %}
