{% macro record_run_states(results) -%}
    {%- if execute -%}
        {%- do adapter.record_run_states(results) -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
