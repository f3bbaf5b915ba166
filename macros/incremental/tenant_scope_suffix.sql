{#- A name suffix for what a run writes outside the tables it shares (temporary tables). -#}
{% macro tenant_scope_suffix() -%}
    {{ return(adapter.tenant_scope_suffix(run_tenant_scope())) }}
{%- endmacro %}
