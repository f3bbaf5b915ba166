{#- One of this mart's stamps as its last build left it. -#}
{% macro swap_stamp(name, value) -%}
    {%- if not execute or model.resource_type == 'unit_test' or value is none or skip_unchanged() -%}
        {{ return(none) }}
    {%- endif -%}
    {{ return(adapter.swap_stamp(this | string, name, value | string, is_incremental())) }}
{%- endmacro %}
