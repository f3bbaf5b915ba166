{#- Hours since the commit of the oldest version of `source_table` whose changes `consumer` has
    not yet taken for every tenant (one past the smallest of its watermarks,
    change_feed_watermarks_sql; a tenant of `source_table`, `consumer` or `tenant_relations`
    with no watermark yet has taken nothing), plus one hour of margin; 0 when every tenant is
    up to date. VACUUM must keep at least that much of the change feed: the consumer's next
    run reads the feed from that version on. -#}
{% macro unconsumed_change_feed_hours(source_table, consumer, tenant_relations=[]) -%}
    {%- set watermarks = change_feed_watermarks_sql(
        source_table, consumer, 'records_version', tenant_relations
    ) -%}
    {%- set query = 'select min(watermark) + 1 from (' ~ watermarks ~ ')' -%}
    {%- set first_unconsumed = run_query(query).columns[0].values()[0] -%}
    {%- set first_unconsumed = 0 if first_unconsumed is none else first_unconsumed | int -%}
    {%- set history = run_query('describe history ' ~ source_table) -%}
    {%- set hours = [0] -%}
    {%- for row in history.rows if row['version'] | int >= first_unconsumed -%}
        {#- the session time zone is UTC, so the commit timestamp is naive UTC -#}
        {%- set age = modules.datetime.datetime.utcnow() - row['timestamp'].replace(tzinfo=none) -%}
        {%- do hours.append((age.total_seconds() / 3600) | round(0, 'ceil') | int + 1) -%}
    {%- endfor -%}
    {{ return(hours | max) }}
{%- endmacro %}
