{#- The tenants whose rows a mart kept per tenant recomputes: those its sources' changes reach. -#}
{% macro changed_tenants(sources) -%}
    {%- set queries = [] -%}
    {%- for source in sources -%}
        {%- do queries.append(changed_keys(source, source_changes(source), ['tenant_id'])) -%}
    {%- endfor -%}
    {{ return(queries | join('\n\n    union\n\n    ')) }}
{%- endmacro %}
