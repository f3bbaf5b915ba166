{#- The tenants a mart kept per tenant recomputes, as a literal SQL list. -#}
{% macro changed_tenants(sources) -%}
    {%- set queries = [] -%}
    {%- for source in sources -%}
        {%- do queries.append(changed_keys(source, source_changes(source), ['tenant_id'])) -%}
    {%- endfor -%}
    {%- set tenants = [] -%}
    {%- if execute and is_incremental() and not skip_unchanged() -%}
        {%- set found = run_query('select distinct tenant_id from (' ~ queries | join('\nunion\n') ~ ')') -%}
        {%- set tenants = found.columns[0].values() | reject('none') | sort | list -%}
    {%- endif -%}
    {%- set literals = [] -%}
    {%- for tenant in tenants -%}
        {%- do literals.append(sql_string_literal(tenant) | trim) -%}
    {%- endfor -%}
    {{ return('(' ~ (literals | join(', ') if literals else 'null') ~ ')') }}
{%- endmacro %}
