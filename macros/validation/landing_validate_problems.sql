{#- Validate stage: the problems of a converted line, from the fields' rules. -#}
{% macro landing_validate_problems(fields) -%}
    {%- set entries = [] -%}
    {%- for field in fields -%}
        {%- for rule in field.rules -%}
            {%- set applies = rule.get('applies_when', 'true') -%}
            {%- do entries.append(
                "case when coalesce(" ~ applies ~ ", false) and not coalesce(" ~ rule.valid_when ~ ", true) then "
                ~ landing_problem('validate', rule.error_code, field.name, sql_string_literal(field.name ~ ': ' ~ rule.message))
                ~ " end"
            ) -%}
        {%- endfor -%}
    {%- endfor -%}
    filter(array(
        {{ entries | join(',\n        ') }}
    ), problem -> problem is not null)
{%- endmacro %}
