{#- dbt's get_where_subquery on our adapter: the rows a data test checks. -#}
{% macro profile_lake_spark__get_where_subquery(relation) -%}
    {%- set where = config.get('where', '') -%}
    {%- if not (execute and where) or skip_unchanged() -%}
        {{ return(dbt.default__get_where_subquery(relation)) }}
    {%- endif -%}
    {%- set test = model.get('test_metadata') or {} -%}
    {%- set key_columns = none -%}
    {%- if test.get('name') == 'unique_combination' -%}
        {%- set key_columns = test.kwargs.columns -%}
    {%- elif test.get('name') == 'unique' -%}
        {%- set key_columns = [test.kwargs.column_name] -%}
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
