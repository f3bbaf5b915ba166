{#- A query of each tenant's watermark in `consumer`, a reader of `relation`'s change feed. -#}
{% macro change_feed_watermarks_sql(
    relation, consumer, version_column, tenant_relations=[], tenant_filter='true', no_watermark=-1
) -%}
    {%- set bookmarks = change_feed_bookmarks_sql(consumer) -%}
    with

    tenants as (
        select distinct tenant_id
        from {{ relation }}
        where {{ tenant_filter }}
        union
        select distinct tenant_id
        from {{ consumer }}
        where {{ tenant_filter }}
        {%- for tenant_relation in tenant_relations %}
            union
            select distinct tenant_id
            from {{ tenant_relation }}
            where {{ tenant_filter }}
        {%- endfor %}
    ),

    watermarks as (
        select
            tenant_id,
            max({{ version_column }}) as watermark
        from {{ consumer }}
        group by tenant_id
        {%- if bookmarks %}
            union all
            {{ bookmarks }}
        {%- endif %}
    )

    select
        tenants.tenant_id,
        coalesce(max(watermarks.watermark), {{ no_watermark }}) as watermark
    from tenants
    left join watermarks on watermarks.tenant_id in (tenants.tenant_id, '*')
    group by tenants.tenant_id
{%- endmacro %}
