{#- Convert stage: the state of one landing field. -#}
{% macro landing_field_state(field) -%}
    {%- set raw = field.name ~ '__raw' -%}
    {%- set kind = 'schema_of_variant(' ~ raw ~ ')' -%}
    case
        when {{ raw }} is null then 'missing'
        when is_variant_null({{ raw }}) then 'null'
    {%- if field.json_type == 'string' %}
        when {{ kind }} = 'STRING' then 'ok'
    {%- elif field.json_type == 'integer' %}
        when {{ kind }} in ('TINYINT', 'SMALLINT', 'INT', 'BIGINT') then 'ok'
    {%- elif field.json_type == 'timestamp' %}
        when {{ kind }} != 'STRING' then 'wrong_type'
        when variant_get({{ raw }}, '$', 'string')
            rlike '{{ var("iso_timestamp_pattern") }}'
            and {{ landing_field_value(field, guarded=false) }} is not null then 'ok'
        when true then 'invalid_timestamp'
    {%- elif field.json_type == 'string_array' %}
        when {{ kind }} in ('ARRAY<STRING>', 'ARRAY<VOID>') then 'ok'
    {%- elif field.json_type == 'object' %}
        {#- the serialized text starts with '{' exactly for objects; cheaper than a schema #}
        when startswith(to_json({{ raw }}), '{') then 'ok'
    {%- endif %}
        else 'wrong_type'
    end
{%- endmacro %}
