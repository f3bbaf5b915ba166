{#- A source read's filter to an incremental mart's keys to recompute. -#}
{% macro key_filter(keys, columns) -%}
    {{ adapter.recompute_keys_filter(keys, columns) }}
{%- endmacro %}
