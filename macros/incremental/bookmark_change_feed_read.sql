{#- Post-hook: bookmark the version a change-feed reader read through. -#}
{% macro bookmark_change_feed_read(consumer) -%}
    {%- if execute -%}
        {%- do adapter.bookmark_change_feed_read(
            change_feed_bookmark_table(), consumer.schema ~ '.' ~ consumer.identifier,
            run_tenant_scope(), flags.FULL_REFRESH
        ) -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
