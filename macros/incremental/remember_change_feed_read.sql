{#- Keeps the version a change-feed reader reads through, for its post-hook. -#}
{% macro remember_change_feed_read(consumer, read_through_version) -%}
    {%- if execute -%}
        {%- do adapter.remember_change_feed_read(
            consumer.schema ~ '.' ~ consumer.identifier, read_through_version | int
        ) -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
