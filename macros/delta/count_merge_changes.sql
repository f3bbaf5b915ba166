{% macro count_merge_changes(target, source, keys, columns, delete_flag, partition_columns=[], predicates=[], compare_rows=true) -%}
    {%- set value_columns = columns | reject('in', keys) | list -%}
    {%- set query -%}
        select
            {% for column in partition_columns -%}
            to_json(collect_set(cast(DBT_INTERNAL_SOURCE.{{ column }} as string))) as {{ column }}__values,
            {% endfor -%}
            {%- if compare_rows %}
            count_if(
                (DBT_INTERNAL_SOURCE.{{ delete_flag }} and DBT_INTERNAL_DEST.{{ keys[0] }} is not null)
                or (not DBT_INTERNAL_SOURCE.{{ delete_flag }} and DBT_INTERNAL_DEST.{{ keys[0] }} is null)
                {%- if value_columns %}
                or (not DBT_INTERNAL_SOURCE.{{ delete_flag }} and not (
                    {% for column in value_columns %}DBT_INTERNAL_DEST.{{ column }} <=> DBT_INTERNAL_SOURCE.{{ column }}{{ ' and ' if not loop.last }}{% endfor %}
                ))
                {%- endif %}
            ) as changed_rows
            {%- else %}
            count(*) as changed_rows
            {%- endif %}
        from {{ source }} as DBT_INTERNAL_SOURCE
        {%- if compare_rows %}
        left join {{ target }} as DBT_INTERNAL_DEST
            on {% for key in keys %}DBT_INTERNAL_DEST.{{ key }} = DBT_INTERNAL_SOURCE.{{ key }}{{ ' and ' if not loop.last }}{% endfor %}
            {%- for predicate in predicates %} and ({{ predicate }}){% endfor %}
        {%- endif %}
    {%- endset -%}
    {%- set found = run_query(query) -%}
    {%- set row = found.rows[0] -%}
    {%- set partition_values = {} -%}
    {%- for column in partition_columns -%}
        {#- as JSON text: run_query returns arrays as JSON strings, and `| list` on one gives characters -#}
        {%- do partition_values.update({column: fromjson(row[column ~ '__values'])}) -%}
    {%- endfor -%}
    {{ return({'rows': row['changed_rows'], 'partition_values': partition_values}) }}
{%- endmacro %}
