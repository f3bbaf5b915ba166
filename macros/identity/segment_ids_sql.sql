{#- One SQL expression evaluating every segment in a single pass over a profile row. -#}
{% macro segment_ids_sql(segments) -%}
    {%- if segments | length == 0 -%}
        cast(array() as array<string>)
    {%- else -%}
        flatten(
            array(
            {%- for segment in segments %}
                if(coalesce(({{ at_segment_evaluation_time(segment.expression) }}), false), array({{ sql_string_literal(segment.segment_id) }}), cast(array() as array<string>))
                {{- "," if not loop.last }}
            {%- endfor %}
            )
        )
    {%- endif -%}
{%- endmacro %}
