{#- Convert stage: every conversion problem of a line (all fields), as an array. -#}
{% macro landing_convert_problems(fields) -%}
    {%- set entries = [] -%}
    {%- for field in fields -%}
        {%- set state = field.name ~ '__state' -%}
        {%- set raw = field.name ~ '__raw' -%}
        {#- a field required only in some cases (payload: for upserts) is ignored otherwise -#}
        {%- if field.required_when -%}
            {%- set needed = '(' ~ field.required_when ~ ')' -%}
            {%- set applies = needed -%}
            {%- set requirement = 'required when ' ~ field.required_when -%}
        {%- else -%}
            {%- set needed = 'true' if field.required else 'false' -%}
            {%- set applies = 'true' -%}
            {%- set requirement = 'required' -%}
        {%- endif -%}
        {%- set absent = "'missing'" if field.nullable else "'missing', 'null'" -%}
        {%- set branches = [
            "when " ~ state ~ " in (" ~ absent ~ ") and coalesce(" ~ needed ~ ", false) then "
            ~ landing_problem('convert', 'missing_field', field.name,
                sql_string_literal(field.name ~ ': ' ~ requirement ~ ', but missing or null')),
            "when " ~ state ~ " = 'wrong_type' and coalesce(" ~ applies ~ ", false) then "
            ~ landing_problem('convert', 'wrong_type', field.name,
                "concat(" ~ sql_string_literal(field.name ~ ': expected ' ~ field.json_type ~ ', got ')
                ~ ", schema_of_variant(" ~ raw ~ "))"),
        ] -%}
        {%- if field.json_type == 'timestamp' -%}
            {%- do branches.append(
                "when " ~ state ~ " = 'invalid_timestamp' then "
                ~ landing_problem('convert', 'invalid_timestamp', field.name,
                    "concat(" ~ sql_string_literal(field.name ~ ': not an ISO-8601 timestamp with a zone: ')
                    ~ ", left(variant_get(" ~ raw ~ ", '$', 'string'), 100))")
            ) -%}
        {%- endif -%}
        {%- do entries.append("case " ~ branches | join(' ') ~ " end") -%}
    {%- endfor -%}
    filter(array(
        {{ entries | join(',\n        ') }}
    ), problem -> problem is not null)
{%- endmacro %}
