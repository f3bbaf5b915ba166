{#- A table's data tests as one query: each failing row or key names the check it failed in
    `failed_check`, with its values as JSON in `failing_values`. Uniqueness is checked on every
    row sharing a key with the rows checked, the other checks on the rows checked, both from
    rows_to_check (the rows the run wrote, on an incremental build: docs/checks.md). -#}
{% test table_checks(model, unique=none, not_null=none, expressions=none, accepted_values=none, relationships=none) %}
{%- set unique = unique or [] -%}
{%- set not_null = not_null or [] -%}
{%- set expressions = expressions or [] -%}
{%- set accepted_values = accepted_values or [] -%}
{%- set relationships = relationships or [] -%}
{%- set usage = 'table_checks (docs/checks.md): ' -%}
{%- if not (unique or not_null or expressions or accepted_values or relationships) -%}
    {{ exceptions.raise_compiler_error(
        usage ~ 'give at least one of unique, not_null, expressions, accepted_values, relationships'
    ) }}
{%- endif -%}
{%- for key in unique if key is string or key is mapping or not key -%}
    {{ exceptions.raise_compiler_error(
        usage ~ 'each entry of unique is a list of key columns, as [[tenant_id, record_id]], not ' ~ key
    ) }}
{%- endfor -%}
{%- if not_null is string or not_null is mapping -%}
    {{ exceptions.raise_compiler_error(usage ~ 'not_null is a list of columns, not ' ~ not_null) }}
{%- endif -%}
{%- for check in expressions if not (check is string or check.expression is defined) -%}
    {{ exceptions.raise_compiler_error(
        usage ~ 'each entry of expressions is a SQL boolean, or {expression: ..., row_condition: ...}, not '
        ~ check
    ) }}
{%- endfor -%}
{%- for check in accepted_values if not (check.column is defined and check['values'] is defined) -%}
    {{ exceptions.raise_compiler_error(
        usage ~ 'each entry of accepted_values is {column: ..., values: [...], row_condition: ...}, not '
        ~ check
    ) }}
{%- endfor -%}
{%- for check in relationships
    if not (check.column is defined and check.to is defined and check.field is defined) -%}
    {{ exceptions.raise_compiler_error(
        usage ~ 'each entry of relationships is {column: ..., to: ref(...), field: ..., row_condition: ...}, not '
        ~ check
    ) }}
{%- endfor -%}
{%- set has_row_checks = not_null or expressions or accepted_values or relationships -%}
{#- a failing row shows its key (the first unique one) and the columns the checks name, or,
    with no key to find it by, the whole row -#}
{%- set shown = [] -%}
{%- for column in (unique[0] if unique else []) + not_null
    + accepted_values | map(attribute='column') | list
    + relationships | map(attribute='column') | list -%}
    {%- if column not in shown %}{% do shown.append(column) %}{% endif -%}
{%- endfor %}

with
{%- if has_row_checks %}

{%- for check in relationships %}

parent_keys_{{ loop.index }} as (

    select distinct {{ check.field }} as parent_key
    from {{ check.to }}

),
{%- endfor %}

checked_rows as (

    select
        {%- if unique %}
        named_struct(
            {%- for column in shown %}
            '{{ column }}', {{ column }}{{ ',' if not loop.last }}
            {%- endfor %}
        ) as checked_row
        {%- else %}
        struct(*) as checked_row
        {%- endif %}
        {%- if not_null %},
        nullif(
            concat_ws(
                ', '
                {%- for column in not_null %},
                case when {{ column }} is null then '{{ column }}' end
                {%- endfor %}
            ),
            ''
        ) as null_columns
        {%- endif %}
        {%- for check in expressions %},
        {%- if check is string or not check.row_condition %}
        not coalesce({{ check if check is string else check.expression }}, false) as expression_failed_{{ loop.index }}
        {%- else %}
        (
            coalesce({{ check.row_condition }}, false)
            and not coalesce({{ check.expression }}, false)
        ) as expression_failed_{{ loop.index }}
        {%- endif %}
        {%- endfor %}
        {%- for check in accepted_values %},
        {%- set accepted -%}
            {{ check.column }} not in (
            {%- for value in check['values'] -%}
                {{ sql_string_literal(value) if value is string else value }}{{ ', ' if not loop.last }}
            {%- endfor -%}
            )
        {%- endset %}
        {%- if check.row_condition %}
        (
            coalesce({{ check.row_condition }}, false)
            and {{ accepted }}
        ) as accepted_values_failed_{{ loop.index }}
        {%- else %}
        {{ accepted }} as accepted_values_failed_{{ loop.index }}
        {%- endif %}
        {%- endfor %}
        {%- for check in relationships %},
        {%- if check.row_condition %}
        case when {{ check.row_condition }} then {{ check.column }} end as relationship_key_{{ loop.index }}
        {%- else %}
        {{ check.column }} as relationship_key_{{ loop.index }}
        {%- endif %}
        {%- endfor %}
    from {{ rows_to_check(model) }}

),

row_checks as (

    select
        checked_rows.checked_row,
        array_compact(
            array(
                {%- if not_null %}
                concat('not_null: ', checked_rows.null_columns)
                {%- if expressions or accepted_values or relationships %},{% endif %}
                {%- endif %}
                {%- for check in expressions %}
                case
                    when checked_rows.expression_failed_{{ loop.index }}
                        then {{ sql_string_literal('expression: ' ~ (check if check is string else check.expression)) }}
                end
                {%- if not loop.last or accepted_values or relationships %},{% endif %}
                {%- endfor %}
                {%- for check in accepted_values %}
                case
                    when checked_rows.accepted_values_failed_{{ loop.index }}
                        then {{ sql_string_literal('accepted_values: ' ~ check.column) }}
                end
                {%- if not loop.last or relationships %},{% endif %}
                {%- endfor %}
                {%- for check in relationships %}
                {%- set parent = check.to if check.to is string else check.to.identifier %}
                case
                    when checked_rows.relationship_key_{{ loop.index }} is not null and parent_keys_{{ loop.index }}.parent_key is null
                        then {{ sql_string_literal(
                            'relationships: ' ~ check.column ~ ' to ' ~ parent ~ '.' ~ check.field
                        ) }}
                end
                {%- if not loop.last %},{% endif %}
                {%- endfor %}
            )
        ) as failed_checks

    from checked_rows
    {%- for check in relationships %}
    left join parent_keys_{{ loop.index }}
        on checked_rows.relationship_key_{{ loop.index }} = parent_keys_{{ loop.index }}.parent_key
    {%- endfor %}

),

row_failures as (

    select
        explode(failed_checks) as failed_check,
        to_json(checked_row) as failing_values
    from row_checks
    where size(failed_checks) > 0

),
{%- endif %}
{%- for key in unique %}

duplicate_keys_{{ loop.index }} as (

    select
        {{ sql_string_literal('unique: ' ~ key | join(', ')) }} as failed_check,
        to_json(
            named_struct(
                {%- for column in key %}
                '{{ column }}', {{ column }},
                {%- endfor %}
                'occurrences', count(*)
            )
        ) as failing_values
    from {{ rows_to_check(model, key) }}
    group by {{ key | join(', ') }}
    having count(*) > 1

),
{%- endfor %}

failures as (
    {%- set parts = (['row_failures'] if has_row_checks else []) %}
    {%- for key in unique %}{% do parts.append('duplicate_keys_' ~ loop.index) %}{% endfor %}
    {%- for part in parts %}

    select
        failed_check,
        failing_values
    from {{ part }}
    {%- if not loop.last %}

    union all
    {%- endif %}
    {%- endfor %}

)

select * from failures

{% endtest %}
