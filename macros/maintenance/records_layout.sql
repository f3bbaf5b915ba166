{#- The physical layout of `records` (var `records_layout`). -#}
{% macro records_layout() -%}
    {%- set layouts = ['partitioned_zorder', 'liquid'] -%}
    {%- set layout = var('records_layout', 'partitioned_zorder') -%}
    {%- if layout not in layouts -%}
        {{ exceptions.raise_compiler_error(
            "var records_layout must be one of " ~ layouts | join(', ') ~ "; got '" ~ layout ~ "'."
        ) }}
    {%- endif -%}
    {{ return(layout) }}
{%- endmacro %}
