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
