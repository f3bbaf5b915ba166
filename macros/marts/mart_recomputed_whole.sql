{#- Whether this run recomputes the incremental mart from its full build SQL: its technique is
    `whole`, or `tenants` (the full build of the tenants written, mart_tenants_recomputed). -#}
{% macro mart_recomputed_whole() -%}
    {%- if not execute or model is not defined or model.resource_type != 'model' -%}
        {{ return(false) }}
    {%- endif -%}
    {%- if not dbt.is_incremental() -%}
        {{ return(false) }}
    {%- endif -%}
    {{ return(mart_technique().name in ['whole', 'tenants']) }}
{%- endmacro %}
