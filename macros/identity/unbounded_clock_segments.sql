{#- The ids of the segments that read the clock and give no changes_at: their membership can
    change at any moment, so every profile is evaluated on every run. -#}
{% macro unbounded_clock_segments(segments) -%}
    {%- set found = [] -%}
    {%- for segment in segments if is_time_dependent(segment.expression) and not segment.changes_at -%}
        {%- do found.append(segment.segment_id) -%}
    {%- endfor -%}
    {{ return(found) }}
{%- endmacro %}
