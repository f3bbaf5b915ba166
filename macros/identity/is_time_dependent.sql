{#- Whether a segment expression reads the clock. -#}
{% macro is_time_dependent(expression) -%}
    {{ return(modules.re.search(segment_clock_pattern(), expression | lower) is not none) }}
{%- endmacro %}
