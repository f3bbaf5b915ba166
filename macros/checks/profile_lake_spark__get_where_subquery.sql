{#- dbt's get_where_subquery on our adapter: the rows a data test checks (rows_to_check). -#}
{% macro profile_lake_spark__get_where_subquery(relation) -%}
    {%- set test = (model.get('test_metadata') or {}) if execute else {} -%}
    {%- if test.get('name') == 'table_checks' -%}
        {#- it scopes each of its checks itself: the rows, or a uniqueness check's wider set -#}
        {{ return(relation) }}
    {%- elif test.get('name') == 'unique' -%}
        {{ return(rows_to_check(relation, [test.kwargs.column_name])) }}
    {%- endif -%}
    {{ return(rows_to_check(relation)) }}
{%- endmacro %}
