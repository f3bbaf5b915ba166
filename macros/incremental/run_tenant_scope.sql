{#- The tenants this run processes (var tenants); none for every tenant. -#}
{% macro run_tenant_scope() -%}
    {{ return(adapter.run_tenant_scope(
        var('tenants', 'all'), var('tenant_id_pattern'), flags.FULL_REFRESH
    )) }}
{%- endmacro %}
