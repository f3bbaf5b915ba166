{#- Post-hook of an incremental mart: stamp the source versions its run read. -#}
{% macro record_consumed_versions() -%}
    {%- if execute -%}
        {{ adapter.record_consumed_sql(this | string) }}
    {%- endif -%}
{%- endmacro %}
