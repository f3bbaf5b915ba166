{#- When a profile's membership of the clock segments can next change: the earliest of their
    changes_at moments not before the evaluation moment (null: none). -#}
{% macro segment_next_change_sql(segments) -%}
    {%- set moments = [] -%}
    {%- for segment in segments if segment.changes_at -%}
        {%- do moments.append('coalesce((' ~ at_segment_evaluation_time(segment.changes_at) ~ '), array())') -%}
    {%- endfor -%}
    {%- if moments -%}
        array_min(filter(concat({{ moments | join(', ') }}), moment -> moment >= {{ segment_evaluation_ts() }}))
    {%- else -%}
        cast(null as timestamp)
    {%- endif -%}
{%- endmacro %}
