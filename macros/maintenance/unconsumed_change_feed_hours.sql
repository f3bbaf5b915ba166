{#- Hours since the commit of the oldest version of `source_table` whose changes `consumer` has
    not yet taken (by the `records_version` bookmark of the tenant furthest behind), plus one
    hour of margin; 0 when the consumer is up to date. VACUUM must keep at least that much of
    the change feed. -#}
{% macro unconsumed_change_feed_hours(source_table, consumer) -%}
    {%- set consumed = run_query(
        'select coalesce(min(bookmark), -1) from (select max(records_version) as bookmark from '
        ~ consumer ~ ' group by tenant_id)'
    ).columns[0].values()[0] | int -%}
    {%- set history = run_query('describe history ' ~ source_table) -%}
    {%- set hours = [0] -%}
    {%- for row in history.rows if row['version'] | int == consumed + 1 -%}
        {#- the session time zone is UTC, so the commit timestamp is naive UTC -#}
        {%- set age = modules.datetime.datetime.utcnow() - row['timestamp'].replace(tzinfo=none) -%}
        {%- do hours.append((age.total_seconds() / 3600) | round(0, 'ceil') | int + 1) -%}
    {%- endfor -%}
    {{ return(hours | max) }}
{%- endmacro %}
