{#- The dbt commands whose runs the run history records. -#}
{% macro run_history_commands() -%}
    {{ return(('run', 'build', 'seed', 'snapshot', 'test', 'freshness')) }}
{%- endmacro %}
