{#- Whether a segment expression reads the clock (current_timestamp(), now(), current_date()):
    its membership changes with no new data, so every run evaluates it for every profile
    (docs/incremental-marts.md). -#}
{% macro is_time_dependent(expression) -%}
    {{ return(modules.re.search(segment_clock_pattern(), expression | lower) is not none) }}
{%- endmacro %}
