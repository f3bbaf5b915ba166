{#- The Delta table of change-feed bookmarks, `<target schema>_control.change_feed_bookmarks`. -#}
{% macro change_feed_bookmark_table() -%}
    {{ return(target.schema ~ '_control.change_feed_bookmarks') }}
{%- endmacro %}
