{#- Whether this run recomputes the incremental mart whole (its technique is `whole`). -#}
{% macro mart_recomputed_whole() -%}
    {%- if not execute or model is not defined or model.resource_type != 'model' -%}
        {{ return(false) }}
    {%- endif -%}
    {%- if not dbt.is_incremental() -%}
        {{ return(false) }}
    {%- endif -%}
    {{ return(mart_technique().name == 'whole') }}
{%- endmacro %}
