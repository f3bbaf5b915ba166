{#- The tenants this run recomputes whole (technique `tenants`); none for every tenant. -#}
{% macro mart_tenants_recomputed() -%}
    {%- if not mart_recomputed_whole() -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set technique = mart_technique() -%}
    {{ return(technique.tenants if technique.name == 'tenants' else none) }}
{%- endmacro %}
