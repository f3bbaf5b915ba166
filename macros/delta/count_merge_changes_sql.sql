{% macro count_merge_changes_sql(target, source, keys, columns, delete_flag, partition_columns=[], predicates=[], compare_rows=true) -%}
    {%- set value_columns = columns | reject('in', keys) | list -%}
    {%- if not (compare_rows or partition_columns) -%}
        select count(*) as changed_rows from {{ source }}
    {%- else -%}
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
        on {% for key in keys %}DBT_INTERNAL_SOURCE.{{ key }} = DBT_INTERNAL_DEST.{{ key }}{{ ' and ' if not loop.last }}{% endfor %}
        {%- for predicate in predicates %} and ({{ predicate }}){% endfor %}
    {%- endif %}
    {%- endif %}
{%- endmacro %}
