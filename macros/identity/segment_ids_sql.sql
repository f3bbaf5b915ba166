{#- One SQL expression evaluating every segment in a single pass over a profile row: the ids
    of the segments whose expression is true (null counts as false), as an array in id order.
    Validate the segments first (validate_segment_expressions).
    Built as flatten(array(if(<expression>, array('<id>'), array()), ...)) rather than
    filter(array(case when ... end, ...), id -> id is not null): filter takes a lambda, and
    Spark evaluates an expression with a lambda, everything beneath it included, without code
    generation, so all the segments would be interpreted row by row. Here only a segment's own
    lambdas (exists(live_records, ...)) are; 100 segments run about 3x faster. -#}
{% macro segment_ids_sql(segments) -%}
    {%- if segments | length == 0 -%}
        cast(array() as array<string>)
    {%- else -%}
        flatten(
            array(
            {%- for segment in segments %}
                if(coalesce(({{ segment.expression }}), false), array({{ sql_string_literal(segment.segment_id) }}), cast(array() as array<string>))
                {{- "," if not loop.last }}
            {%- endfor %}
            )
        )
    {%- endif -%}
{%- endmacro %}
