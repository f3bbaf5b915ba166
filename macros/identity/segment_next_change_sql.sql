{#- When a profile's membership of the clock segments can next change: the earliest of their
    changes_at moments not before the evaluation moment (null: none); the evaluation moment
    itself when a segment reads the clock and says no changes_at (it can change at any moment:
    the row is due at the next run, which the run planner reads from the table's statistics). -#}
{% macro segment_next_change_sql(segments) -%}
    {%- set moments = [] -%}
    {%- for segment in segments if segment.changes_at -%}
        {%- do moments.append('coalesce((' ~ at_segment_evaluation_time(segment.changes_at) ~ '), array())') -%}
    {%- endfor -%}
    {%- if unbounded_clock_segments(segments) -%}
        {{ segment_evaluation_ts() }}
    {%- elif moments -%}
        array_min(filter(concat({{ moments | join(', ') }}), moment -> moment >= {{ segment_evaluation_ts() }}))
    {%- else -%}
        cast(null as timestamp)
    {%- endif -%}
{%- endmacro %}
