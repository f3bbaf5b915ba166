{#- A query for the first version of `relation`'s change feed that `consumer` has not taken for
    every tenant: one past the smallest of the tenants' watermarks (each tenant's newest
    `version_column` in `consumer`), where a tenant with no row in `consumer` yet counts as
    `no_watermark`. The tenants are those of `relation`, of `consumer` and of
    `tenant_relations` matching `tenant_filter`: a tenant whose rows were all inserted and
    deleted from `relation` before the consumer saw them is only in a table that keeps
    tombstones. Null when there is no tenant at all. -#}
{% macro first_unconsumed_change_version_sql(
    relation, consumer, version_column, tenant_relations=[], tenant_filter='true', no_watermark=-1
) -%}
    with
    tenants as (
        select distinct tenant_id from {{ relation }} where {{ tenant_filter }}
        union
        select distinct tenant_id from {{ consumer }} where {{ tenant_filter }}
        {%- for tenant_relation in tenant_relations %}
        union
        select distinct tenant_id from {{ tenant_relation }} where {{ tenant_filter }}
        {%- endfor %}
    ),
    watermarks as (
        select tenant_id, max({{ version_column }}) as watermark from {{ consumer }} group by tenant_id
    )
    select min(coalesce(watermarks.watermark, {{ no_watermark }})) + 1
    from tenants left join watermarks on tenants.tenant_id = watermarks.tenant_id
{%- endmacro %}
