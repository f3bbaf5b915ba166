{#- Parse stage: a landing line's JSON value and its parse problem. -#}
{% macro parse_landing_line(line_column='line', utf8_column='is_valid_utf8') -%}
    {%- set wrapped = "try_parse_json(concat('[', " ~ line_column ~ ", ']'))" -%}
    {%- set one_value = "(variant_get(" ~ wrapped ~ ", '$[0]') is not null and variant_get(" ~ wrapped ~ ", '$[1]') is null)" -%}
    {%- set top_keys = 'json_object_keys(' ~ line_column ~ ')' -%}
    case when {{ one_value }} then variant_get({{ wrapped }}, '$[0]') end as message,
    case
        when not {{ utf8_column }}
            then {{ landing_problem('parse', 'invalid_utf8', none, sql_string_literal('the line is not valid UTF-8 (invalid bytes are shown as \\xNN escapes)')) }}
        when not coalesce({{ one_value }}, false)
            then {{ landing_problem('parse', 'invalid_json', none,
                "concat('the line is not one JSON value (malformed, trailing content, nested over 999 levels deep, or over 16 MiB); ', "
                ~ "octet_length(" ~ line_column ~ "), ' bytes')") }}
        when not startswith(ltrim({{ line_column }}), '{')
            then {{ landing_problem('parse', 'not_an_object', none, sql_string_literal('the line is JSON but not an object (an array or a scalar)')) }}
        when size({{ top_keys }}) != size(array_distinct({{ top_keys }}))
            then {{ landing_problem('parse', 'duplicate_key', none,
                "concat('the message names a field more than once: ', array_join(filter(array_distinct("
                ~ top_keys ~ "), key -> size(filter(" ~ top_keys ~ ", other -> other = key)) > 1), ', '))") }}
    end as parse_problem
{%- endmacro %}
