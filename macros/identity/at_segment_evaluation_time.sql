{#- `expression` read at the var segment_evaluation_ts (an ISO timestamp; default: the
    query's own clock), so that two runs can evaluate the segments at the same moment. -#}
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
