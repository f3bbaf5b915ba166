{#- Post-hook of an incremental mart: stamp the source versions its run read, once it has
    written (nothing when none moved). -#}
{% macro record_consumed_versions() -%}
    {%- if execute -%}
        {{ adapter.record_consumed_sql(this | string) }}
    {%- endif -%}
{%- endmacro %}
