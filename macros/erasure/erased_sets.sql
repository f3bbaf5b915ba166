{#- One row per tenant with something erased (SPEC.md section 7): its salt and the hashes of
    its erased identities and records, for a left join by tenant_id before the rules of
    adapter.erasure_filter_sql. No row, and no read, while no request was ever applied (the
    erased set's table is created with its first rows). -#}
{% macro erased_sets() -%}
    {%- set erased = source('erasure_control', 'erased_set') -%}
    {#- a unit test gives the source as a CTE of its rows -#}
    {%- set given = (erased | string).startswith('__dbt__cte__') -%}
    {%- if given or (execute and adapter.get_relation(erased.database, erased.schema, erased.identifier) is not none) -%}
        {{ adapter.erasure_filter_sql(
            'sets', erased | string, source('erasure_control', 'erasure_salts') | string
        ) }}
    {%- else -%}
        {{ adapter.erasure_filter_sql('no_sets') }}
    {%- endif -%}
{%- endmacro %}
