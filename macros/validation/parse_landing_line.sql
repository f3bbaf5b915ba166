{#- Parse stage: the line as a VARIANT (`message`, null when it is not JSON) and at most one
    parse problem. Needs spark.sql.variant.allowDuplicateKeys so that duplicate keys nested in
    a payload parse (only the top level is checked, per SPEC.md); try_parse_json never throws. -#}
{% macro parse_landing_line(line_column='line', utf8_column='is_valid_utf8') -%}
    {%- set top_keys = 'json_object_keys(' ~ line_column ~ ')' -%}
    try_parse_json({{ line_column }}) as message,
    case
        when not {{ utf8_column }}
            then {{ landing_problem('parse', 'invalid_utf8', none, sql_string_literal('the line is not valid UTF-8 (invalid bytes are shown as \\xNN escapes)')) }}
        when try_parse_json({{ line_column }}) is null
            then {{ landing_problem('parse', 'invalid_json', none,
                "concat('the line is not JSON (malformed, nested over 1000 levels deep, or over 16 MiB); ', "
                ~ "octet_length(" ~ line_column ~ "), ' bytes')") }}
        when not startswith(ltrim({{ line_column }}), '{')
            then {{ landing_problem('parse', 'not_an_object', none, "'the line is JSON but not an object (an array or a scalar)'") }}
        when size({{ top_keys }}) != size(array_distinct({{ top_keys }}))
            then {{ landing_problem('parse', 'duplicate_key', none,
                "concat('the message names a field more than once: ', array_join(filter(array_distinct("
                ~ top_keys ~ "), key -> size(filter(" ~ top_keys ~ ", other -> other = key)) > 1), ', '))") }}
    end as parse_problem
{%- endmacro %}
