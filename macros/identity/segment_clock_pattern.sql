{#- The clock functions a segment expression may read. -#}
{% macro segment_clock_pattern() -%}
    {{ return('\\b(current_timestamp|now|current_date|localtimestamp)\\b') }}
{%- endmacro %}
