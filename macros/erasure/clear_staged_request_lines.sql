{#- Post-hook of stg_erasures__requests: no line of the `erasures/` stream is kept as text. -#}
{% macro clear_staged_request_lines() -%}
    {%- if execute -%}
        {%- set done = adapter.clear_staged_request_lines(
            source('landing', 'erasures') | string, this | string, model.unique_id
        ) -%}
        {%- if done -%}
            {{ log(done, info=true) }}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}
