{% macro count_merge_changes(target, source, keys, columns, delete_flag, partition_columns=[], predicates=[], compare_rows=true) -%}
    {%- set query = count_merge_changes_sql(target, source, keys, columns, delete_flag, partition_columns, predicates, compare_rows) -%}
    {%- set found = run_query(query) -%}
    {%- set row = found.rows[0] -%}
    {%- set partition_values = {} -%}
    {%- for column in partition_columns -%}
        {#- as JSON text: run_query returns arrays as JSON strings, and `| list` on one gives characters -#}
        {%- do partition_values.update({column: fromjson(row[column ~ '__values'])}) -%}
    {%- endfor -%}
    {{ return({'rows': row['changed_rows'], 'partition_values': partition_values}) }}
{%- endmacro %}
