{#- The moment a run evaluates segments at, as a SQL timestamp literal. -#}
{% macro segment_evaluation_ts() -%}
    {%- set moment = var('segment_evaluation_ts', none) or run_started_at.strftime('%Y-%m-%dT%H:%M:%S.%fZ') -%}
    {{ return('timestamp ' ~ sql_string_literal(moment)) }}
{%- endmacro %}
