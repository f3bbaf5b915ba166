{#- One row per tenant with something erased (SPEC.md section 7): its salt and the hashes of
    its erased identities and records, for a left join by tenant_id before the rules of
    adapter.erasure_filter_sql. -#}
{% macro erased_sets() -%}
    {{ adapter.erasure_filter_sql(
        'sets',
        source('erasure_control', 'erased_set') | string,
        source('erasure_control', 'erasure_salts') | string
    ) }}
{%- endmacro %}
