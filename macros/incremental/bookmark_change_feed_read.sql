{#- Post-hook: bookmark the version a change-feed reader read through. -#}
{% macro bookmark_change_feed_read(consumer) -%}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set consumer_key = consumer.schema ~ '.' ~ consumer.identifier -%}
    {%- set setting = 'profile_lake.change_feed_read_through.' ~ consumer_key -%}
    {%- set remembered = run_query('set ' ~ setting).columns[1].values()[0] -%}
    {%- if remembered == '<undefined>' -%}
        {{ return('') }}
    {%- endif -%}
    {%- do run_query('reset ' ~ setting) -%}
    {%- set read_through = remembered | int -%}
    {%- set tenants = run_tenant_scope() -%}
    {%- set tenant_keys = ['*'] if tenants is none else tenants -%}
    {%- set tenant_key_list -%}
        {% for tenant_key in tenant_keys %}'{{ tenant_key }}'{{ ', ' if not loop.last }}{% endfor %}
    {%- endset -%}
    {%- set table = change_feed_bookmark_table() -%}
    {%- do run_query('create schema if not exists ' ~ table.split('.')[0]) -%}
    {%- do run_query(
        'create table if not exists ' ~ table ~ ' (consumer string, tenant_key string, '
        ~ 'read_through_version bigint, bookmarked_at timestamp) using delta '
        ~ 'partitioned by (consumer, tenant_key)'
    ) -%}
    {%- set behind_query -%}
        select wanted.tenant_key
        from (select explode(array({{ tenant_key_list }})) as tenant_key) as wanted
        left join {{ table }} as bookmarks
            on
                bookmarks.consumer = '{{ consumer_key }}'
                and bookmarks.tenant_key in (wanted.tenant_key, '*')
        group by wanted.tenant_key
        having coalesce(max(bookmarks.read_through_version), -1) < {{ read_through }}
    {%- endset -%}
    {%- if not flags.FULL_REFRESH and run_query(behind_query).rows | length == 0 -%}
        {{ return('') }}
    {%- endif -%}
    {{ log(
        consumer_key ~ ': change feed read through version ' ~ read_through ~ ', bookmarked for '
        ~ ('every tenant' if tenants is none else 'tenants ' ~ tenants | join(', ')), info=true
    ) }}
    {%- set bookmark -%}
        insert into {{ table }}
        replace where consumer = '{{ consumer_key }}'
        {%- if tenants is not none %} and tenant_key in ({{ tenant_key_list }}){% endif %}
        select
            '{{ consumer_key }}' as consumer,
            tenant_key,
            cast({{ read_through }} as bigint) as read_through_version,
            current_timestamp() as bookmarked_at
        from (select explode(array({{ tenant_key_list }})) as tenant_key)
    {%- endset -%}
    {{ return(bookmark) }}
{%- endmacro %}
