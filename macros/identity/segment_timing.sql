{#- Segments whose expression reads the clock (current_timestamp(), now(), current_date()):
    their membership changes with no new data, so every run evaluates them for every profile
    (docs/incremental-marts.md). -#}
{% macro is_time_dependent(expression) -%}
    {{ return(modules.re.search(segment_clock_pattern(), expression | lower) is not none) }}
{%- endmacro %}

{% macro segment_clock_pattern() -%}
    {{ return('\\b(current_timestamp|now|current_date|localtimestamp)\\b') }}
{%- endmacro %}

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
