{#- MERGE `source` into `target` on `unique_key`: rows whose `delete_flag` is true delete their
    match; other rows update their match only when a column really differs (null-safe), or
    insert when there is none. A repeated source therefore changes nothing. `partition_values`
    (column -> list of values) adds literal predicates on the target, so that Delta's conflict
    detection sees which partitions the MERGE touches and concurrent merges of other tenants
    do not conflict. -#}
{% macro delta_merge_upserts_and_deletes(target, source, unique_key, columns, delete_flag, partition_values={}) -%}
    {{ return(adapter.dispatch('delta_merge_upserts_and_deletes', 'profile_lake')(
        target, source, unique_key, columns, delete_flag, partition_values)) }}
{%- endmacro %}

{% macro default__delta_merge_upserts_and_deletes(target, source, unique_key, columns, delete_flag, partition_values={}) -%}
    {{ exceptions.raise_compiler_error(
        "delta_merge_upserts_and_deletes needs Delta Lake on Spark; adapter " ~ adapter.type() ~ " has no MERGE with a delete branch here."
    ) }}
{%- endmacro %}

{% macro spark__delta_merge_upserts_and_deletes(target, source, unique_key, columns, delete_flag, partition_values={}) -%}
    {%- set keys = [unique_key] if unique_key is string else unique_key -%}
    {%- if not keys -%}
        {{ exceptions.raise_compiler_error("delta_merge_upserts_and_deletes needs a unique_key (a column or a list of columns).") }}
    {%- endif -%}
    {%- set value_columns = columns | reject('in', keys) | list -%}
    merge into {{ target }} as target
    using {{ source }} as source
    on
        {% for key in keys -%}
        target.{{ key }} = source.{{ key }}{{ ' and' if not loop.last }}
        {% endfor -%}
        {%- for column, values in partition_values.items() %}
        and target.{{ column }} in ({% for value in values %}'{{ value | replace("\\", "\\\\") | replace("'", "\\'") }}'{{ ', ' if not loop.last }}{% endfor %})
        {%- endfor %}
    when matched and source.{{ delete_flag }} then delete
    {%- if value_columns %}
    when matched and not source.{{ delete_flag }} and not (
        {% for column in value_columns -%}
        target.{{ column }} <=> source.{{ column }}{{ ' and' if not loop.last }}
        {% endfor -%}
    ) then update set
        {% for column in value_columns -%}
        target.{{ column }} = source.{{ column }}{{ ',' if not loop.last }}
        {% endfor -%}
    {%- endif %}
    when not matched and not source.{{ delete_flag }} then insert (
        {{ columns | join(', ') }}
    ) values (
        {% for column in columns -%}
        source.{{ column }}{{ ', ' if not loop.last }}
        {%- endfor %}
    )
{%- endmacro %}
