{#- The Delta table of change-feed bookmarks, `<target schema>_control.change_feed_bookmarks`:
    per consumer of a change feed (record_notifications of records' feed) and tenant key (a
    tenant id, or `*` for every tenant), the version of the feed read through. A bookmark says
    every change of that tenant up to the version is in the consumer, so a tenant without
    changes moves on with the runs that read past it (see bookmark_change_feed_read).
    Partitioned by consumer and tenant key: runs of other tenants rewrite other partitions,
    which Delta's conflict detection tells apart. -#}
{% macro change_feed_bookmark_table() -%}
    {{ return(target.schema ~ '_control.change_feed_bookmarks') }}
{%- endmacro %}
