{#- MERGE `source` into `target` on `unique_key`: rows whose `delete_flag` is true delete their
    match; other rows update their match only when a column really differs (null-safe), or
    insert when there is none. A repeated source therefore changes nothing. `partition_values`
    (column -> list of values) adds literal predicates on the target, so that Delta's conflict
    detection sees which partitions the MERGE touches and concurrent merges of other tenants
    do not conflict. `predicates` (SQL on the aliases DBT_INTERNAL_DEST and DBT_INTERNAL_SOURCE,
    as dbt's incremental_predicates) are added to the condition as they are. `compared_columns`
    (default: every column) are those that tell a changed row: a match equal on them is left
    alone, and the MERGE reads only them of the target's other columns (with deletion vectors,
    not the payloads of every row in the files it touches), unless the target has the change
    feed on: its update pre-images and deleted rows carry the old rows, payloads included. -#}
{% macro delta_merge_upserts_and_deletes(target, source, unique_key, columns, delete_flag, partition_values={}, predicates=[], compared_columns=none) -%}
    {{ return(adapter.dispatch('delta_merge_upserts_and_deletes', 'profile_lake')(
        target, source, unique_key, columns, delete_flag, partition_values, predicates, compared_columns)) }}
{%- endmacro %}

{% macro default__delta_merge_upserts_and_deletes(target, source, unique_key, columns, delete_flag, partition_values={}, predicates=[], compared_columns=none) -%}
    {{ exceptions.raise_compiler_error(
        "delta_merge_upserts_and_deletes needs Delta Lake on Spark; adapter " ~ adapter.type() ~ " has no MERGE with a delete branch here."
    ) }}
{%- endmacro %}

{% macro spark__delta_merge_upserts_and_deletes(target, source, unique_key, columns, delete_flag, partition_values={}, predicates=[], compared_columns=none) -%}
    {%- set keys = [unique_key] if unique_key is string else unique_key -%}
    {%- if not keys -%}
        {{ exceptions.raise_compiler_error("delta_merge_upserts_and_deletes needs a unique_key (a column or a list of columns).") }}
    {%- endif -%}
    {%- set value_columns = columns | reject('in', keys) | list -%}
    {%- set changed_columns = (compared_columns or columns) | reject('in', keys) | list or value_columns -%}
    merge into {{ target }} as DBT_INTERNAL_DEST
    using {{ source }} as DBT_INTERNAL_SOURCE
    on
        {% for key in keys -%}
        DBT_INTERNAL_DEST.{{ key }} = DBT_INTERNAL_SOURCE.{{ key }}{{ ' and' if not loop.last }}
        {% endfor -%}
        {%- for predicate in predicates %}
        and ({{ predicate }})
        {%- endfor %}
        {%- for column, values in partition_values.items() %}
        and DBT_INTERNAL_DEST.{{ column }} in ({% for value in values %}'{{ value | replace("\\", "\\\\") | replace("'", "\\'") }}'{{ ', ' if not loop.last }}{% endfor %})
        {%- endfor %}
    when matched and DBT_INTERNAL_SOURCE.{{ delete_flag }} then delete
    {%- if value_columns %}
    when matched and not DBT_INTERNAL_SOURCE.{{ delete_flag }} and not (
        {% for column in changed_columns -%}
        DBT_INTERNAL_DEST.{{ column }} <=> DBT_INTERNAL_SOURCE.{{ column }}{{ ' and' if not loop.last }}
        {% endfor -%}
    ) then update set
        {% for column in value_columns -%}
        DBT_INTERNAL_DEST.{{ column }} = DBT_INTERNAL_SOURCE.{{ column }}{{ ',' if not loop.last }}
        {% endfor -%}
    {%- endif %}
    when not matched and not DBT_INTERNAL_SOURCE.{{ delete_flag }} then insert (
        {{ columns | join(', ') }}
    ) values (
        {% for column in columns -%}
        DBT_INTERNAL_SOURCE.{{ column }}{{ ', ' if not loop.last }}
        {%- endfor %}
    )
{%- endmacro %}
