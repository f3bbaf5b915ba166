{#- The tenants this run processes: var `tenants` (a list, or one tenant id), or none for
    every tenant, including lines whose tenant is unknown or unreadable. The tenant lock
    (macros/locks) holds exactly these tenants for the run. -#}
{% macro run_tenant_scope() -%}
    {%- set scope = var('tenants', 'all') -%}
    {%- if scope is none or scope == 'all' or scope == [] -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set tenants = [scope] if scope is string else scope | list -%}
    {%- for tenant in tenants -%}
        {%- if tenant is not string or not modules.re.match('^[a-z0-9_]{1,64}$', tenant) -%}
            {{ exceptions.raise_compiler_error(
                "var tenants must be 'all' or a list of tenant ids; '" ~ tenant ~ "' is not a tenant id"
            ) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(tenants | unique | sort) }}
{%- endmacro %}
