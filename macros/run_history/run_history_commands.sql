{#- The dbt commands whose runs the run history records: those that execute the project's
    hooks. `compile` and `docs generate` render the hooks without running them, so a macro
    with side effects must not act there. -#}
{% macro run_history_commands() -%}
    {{ return(('run', 'build', 'seed', 'snapshot', 'test', 'freshness')) }}
{%- endmacro %}
