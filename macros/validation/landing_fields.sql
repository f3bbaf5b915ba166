{#- The landing fields a staging model converts and validates. -#}
{% macro landing_fields(model_node) -%}
    {%- if execute and model_node.resource_type == 'unit_test' -%}
        {{ exceptions.raise_compiler_error(
            "Unit test " ~ model_node.name ~ ": " ~ model_node.get('tested_node_unique_id', 'this model')
            ~ " reads its landing rules from its YAML columns (meta.landing), which dbt does not"
            ~ " pass to a unit test. Test its rules by building it on landing lines instead, as"
            ~ " pytests/integration/small_lake/test_hostile_input.py does."
        ) }}
    {%- endif -%}
    {%- set fields = [] -%}
    {%- for column in model_node.columns.values() -%}
        {%- set spec = column.meta.get('landing') -%}
        {%- if spec is not none -%}
            {%- if spec.get('json_type') not in ['string', 'integer', 'timestamp', 'string_array', 'object'] -%}
                {{ exceptions.raise_compiler_error(
                    "Column " ~ column.name ~ " of " ~ model_node.name ~ ": meta.landing.json_type must be "
                    ~ "one of string, integer, timestamp, string_array, object; got "
                    ~ spec.get('json_type') ~ "."
                ) }}
            {%- endif -%}
            {%- set rules = [] -%}
            {%- for rule in spec.get('rules', []) -%}
                {%- if not rule.get('error_code') or not rule.get('valid_when') or not rule.get('message') -%}
                    {{ exceptions.raise_compiler_error(
                        "A rule of column " ~ column.name ~ " of " ~ model_node.name
                        ~ " needs error_code, valid_when and message; got " ~ rule ~ "."
                    ) }}
                {%- endif -%}
                {#- YAML gives a var as written: a var built from another one (identity_pattern
                    from identity_namespaces) is rendered here, in the model's context -#}
                {%- set rendered = {} -%}
                {%- for key, value in rule.items() -%}
                    {%- do rendered.update({key: render(value) if value is string else value}) -%}
                {%- endfor -%}
                {%- do rules.append(rendered) -%}
            {%- endfor -%}
            {#- `field`: the message field, when the column is computed from it under another
                name (stg_erasures__requests keeps identity_hash, never the identity) -#}
            {%- do fields.append({
                'name': spec.get('field', column.name),
                'json_type': spec['json_type'],
                'required': spec.get('required', true),
                'required_when': spec.get('required_when'),
                'nullable': spec.get('nullable', false),
                'rules': rules,
            }) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if execute and fields | length == 0 -%}
        {{ exceptions.raise_compiler_error(
            model_node.name ~ " declares no landing fields: give its YAML columns meta.landing entries."
        ) }}
    {%- endif -%}
    {{ return(fields) }}
{%- endmacro %}
