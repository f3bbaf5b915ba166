{#- The value of this mart's stamp `name` as its last build left it (none when it has none or
    the run builds it anew); the post-hook record_consumed_versions stamps `value` instead. -#}
{% macro swap_stamp(name, value) -%}
    {%- if not execute or model.resource_type == 'unit_test' or value is none or skip_unchanged() -%}
        {{ return(none) }}
    {%- endif -%}
    {{ return(adapter.swap_stamp(this | string, name, value | string, is_incremental())) }}
{%- endmacro %}
