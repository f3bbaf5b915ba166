{#- The physical layout of `records` (var `records_layout`): `partitioned_zorder`, partitioned
    by tenant and Z-ordered by OPTIMIZE, or `liquid`, Delta liquid clustering. records.sql's
    config and the README explain the choice; a value outside the two fails at compile time. -#}
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
