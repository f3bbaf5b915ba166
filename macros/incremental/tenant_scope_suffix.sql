{#- A name suffix for what a run writes outside the tables it shares (temporary tables):
    empty when the run processes every tenant, else `_` and a hash of its tenants. -#}
{% macro tenant_scope_suffix() -%}
    {%- set tenants = run_tenant_scope() -%}
    {%- if tenants is none -%}
        {{ return('') }}
    {%- endif -%}
    {{ return('_' ~ local_md5(tenants | join(','))[:12]) }}
{%- endmacro %}
