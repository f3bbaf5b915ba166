{#- One SQL expression evaluating every segment in a single pass over a profile row: the ids
    of the segments whose expression is true (null counts as false), as an array in id order.
    Validate the segments first (validate_segment_expressions). -#}
{% macro segment_ids_sql(segments) -%}
    {%- if segments | length == 0 -%}
        cast(array() as array<string>)
    {%- else -%}
        filter(
            array(
            {%- for segment in segments %}
                case when coalesce(({{ segment.expression }}), false) then {{ sql_string_literal(segment.segment_id) }} end
                {{- "," if not loop.last }}
            {%- endfor %}
            ),
            segment_id -> segment_id is not null
        )
    {%- endif -%}
{%- endmacro %}
