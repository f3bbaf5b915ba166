{#- A segment expression read at the var segment_evaluation_ts. -#}
{% macro at_segment_evaluation_time(expression) -%}
    {%- set moment = var('segment_evaluation_ts', none) -%}
    {%- if moment is none -%}
        {{ return(expression) }}
    {%- endif -%}
    {%- set clock = "timestamp" ~ sql_string_literal(moment) -%}
    {{ return(modules.re.sub(
        '(?i)\\b(current_timestamp|now|localtimestamp)\\b(\\s*\\(\\s*\\))?', clock,
        modules.re.sub('(?i)\\bcurrent_date\\b(\\s*\\(\\s*\\))?', 'to_date(' ~ clock ~ ')', expression)
    )) }}
{%- endmacro %}
