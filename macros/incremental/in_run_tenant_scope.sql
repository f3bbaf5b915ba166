{#- A SQL predicate: the row's tenant is one this run processes. -#}
{% macro in_run_tenant_scope(column='tenant_id') -%}
    {%- set tenants = run_tenant_scope() -%}
    {%- if tenants is none -%}
        true
    {%- else -%}
        {{ column }} in ({% for tenant in tenants %}'{{ tenant }}'{{ ', ' if not loop.last }}{% endfor %})
    {%- endif -%}
{%- endmacro %}
