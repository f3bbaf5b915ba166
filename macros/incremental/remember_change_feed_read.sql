{#- Called by a model reading a change feed, while it compiles: keeps the version it reads the
    feed through in a setting of the Spark session, for its post-hook bookmark_change_feed_read
    (a hook cannot see the model's variables, and the table may have moved on by then). -#}
{% macro remember_change_feed_read(consumer, read_through_version) -%}
    {%- if execute -%}
        {%- do run_query(
            'set profile_lake.change_feed_read_through.' ~ consumer.schema ~ '.' ~ consumer.identifier
            ~ ' = ' ~ (read_through_version | int)
        ) -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
