{#- The tenants this run processes: var `tenants` (a list, or one tenant id), or none for
    every tenant, including lines whose tenant is unknown or unreadable. The tenant lock
    (macros/locks) holds exactly these tenants for the run. A full refresh processes every
    tenant: with var tenants set it is an error. -#}
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
    {%- if flags.FULL_REFRESH -%}
        {#- it would rebuild each incremental table with these tenants' rows only -#}
        {{ exceptions.raise_compiler_error(
            "--full-refresh rebuilds every tenant's rows, so it cannot be limited to var tenants ("
            ~ tenants | unique | sort | join(', ') ~ "): the other tenants' rows would be lost. "
            ~ "Run it without var tenants."
        ) }}
    {%- endif -%}
    {{ return(tenants | unique | sort) }}
{%- endmacro %}
