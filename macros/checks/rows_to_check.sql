{#- The rows a data test of `relation` checks: dbt's `where` subquery, scoped by profile_lake.checks
    when `where` calls rows_this_run() or changes_this_run(), and widened for a uniqueness check
    (`key_columns` given) to every row sharing a key with those rows (docs/checks.md). -#}
{% macro rows_to_check(relation, key_columns=none) -%}
    {%- set where = config.get('where', '') -%}
    {%- if not (execute and where) or skip_unchanged() -%}
        {{ return(dbt.default__get_where_subquery(relation)) }}
    {%- endif -%}
    {%- set scoped = adapter.rows_this_run_where(
        relation | string, where, key_columns, run_started_at.isoformat(),
        flags.WHICH, flags.FULL_REFRESH, var('full_checks', false)
    ) -%}
    {%- if scoped is none -%}
        {{ return(dbt.default__get_where_subquery(relation)) }}
    {%- endif -%}
    {{ return(scoped) }}
{%- endmacro %}
