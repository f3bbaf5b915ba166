{#- A segment's SQL read at the run's evaluation moment (segment_evaluation_ts). -#}
{% macro at_segment_evaluation_time(expression) -%}
    {%- set clock = segment_evaluation_ts() -%}
    {{ return(modules.re.sub(
        '(?i)\\b(current_timestamp|now|localtimestamp)\\b(\\s*\\(\\s*\\))?', clock,
        modules.re.sub('(?i)\\bcurrent_date\\b(\\s*\\(\\s*\\))?', 'to_date(' ~ clock ~ ')', expression)
    )) }}
{%- endmacro %}
