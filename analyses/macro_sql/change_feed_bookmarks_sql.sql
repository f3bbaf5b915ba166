{%- set bookmarks = change_feed_bookmarks_sql(
    api.Relation.create(schema='lake', identifier='record_notifications')
) -%}
{{ bookmarks if bookmarks else 'select 1 as no_bookmark_table' }}
