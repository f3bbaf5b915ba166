{#- MERGE `source` into `target` on `unique_key`. -#}
{% macro delta_merge_upserts_and_deletes(target, source, unique_key, columns, delete_flag, partition_values={}, predicates=[], compared_columns=none, delete_unmatched=false) -%}
    {{ return(adapter.dispatch('delta_merge_upserts_and_deletes', 'profile_lake')(
        target, source, unique_key, columns, delete_flag, partition_values, predicates, compared_columns, delete_unmatched)) }}
{%- endmacro %}

{% macro default__delta_merge_upserts_and_deletes(target, source, unique_key, columns, delete_flag, partition_values={}, predicates=[], compared_columns=none, delete_unmatched=false) -%}
    {{ exceptions.raise_compiler_error(
        "delta_merge_upserts_and_deletes needs Delta Lake on Spark; adapter " ~ adapter.type() ~ " has no MERGE with a delete branch here."
    ) }}
{%- endmacro %}

{#- `delete_flag` none: the source selects every row the target keeps (no delete flag); with
    `delete_unmatched`, the target's rows the source does not select are deleted (when it is a
    predicate on DBT_INTERNAL_DEST rather than true, only those of them that meet it) -#}
{% macro spark__delta_merge_upserts_and_deletes(target, source, unique_key, columns, delete_flag, partition_values={}, predicates=[], compared_columns=none, delete_unmatched=false) -%}
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
    {%- if delete_flag %}
    when matched and DBT_INTERNAL_SOURCE.{{ delete_flag }} then delete
    {%- endif %}
    {%- if value_columns %}
    when matched{{ ' and not DBT_INTERNAL_SOURCE.' ~ delete_flag if delete_flag }} and not (
        {% for column in changed_columns -%}
        DBT_INTERNAL_DEST.{{ column }} <=> DBT_INTERNAL_SOURCE.{{ column }}{{ ' and' if not loop.last }}
        {% endfor -%}
    ) then update set
        {% for column in value_columns -%}
        DBT_INTERNAL_DEST.{{ column }} = DBT_INTERNAL_SOURCE.{{ column }}{{ ',' if not loop.last }}
        {% endfor -%}
    {%- endif %}
    when not matched{{ ' and not DBT_INTERNAL_SOURCE.' ~ delete_flag if delete_flag }} then insert (
        {{ columns | join(', ') }}
    ) values (
        {% for column in columns -%}
        DBT_INTERNAL_SOURCE.{{ column }}{{ ', ' if not loop.last }}
        {%- endfor %}
    )
    {%- if delete_unmatched is string %}
    when not matched by source and ({{ delete_unmatched }}) then delete
    {%- elif delete_unmatched %}
    when not matched by source then delete
    {%- endif %}
{%- endmacro %}
