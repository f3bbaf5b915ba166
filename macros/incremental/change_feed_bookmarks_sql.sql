{% macro change_feed_bookmarks_sql(consumer) -%}
    {%- if not execute -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set schema, identifier = change_feed_bookmark_table().split('.') -%}
    {%- if run_query("show schemas like '" ~ schema ~ "'").rows | length == 0 -%}
        {{ return(none) }}
    {%- endif -%}
    {%- if run_query("show tables in " ~ schema ~ " like '" ~ identifier ~ "'").rows | length == 0 -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set query -%}
        select
            tenant_key as tenant_id,
            max(read_through_version) as watermark
        from {{ schema }}.{{ identifier }}
        where consumer = '{{ consumer.schema }}.{{ consumer.identifier }}'
        group by tenant_key
    {%- endset -%}
    {{ return(query) }}
{%- endmacro %}
