{#- The rows of a source counted by `columns` (name -> SQL expression over the source's columns),
    kept up from the source's change feed: a run adds each change's post-image and takes away
    its pre-image, so it reads the run's changes and the counts they reach, never the source
    whole. Each count keeps the source version it includes (`version_column`) and takes only the
    changes after it, so a run that reads the same changes again (stopped before its stamp)
    does not count them twice; a count that falls to 0 stays, to keep its version. When the
    feed cannot be read, every count is recounted from the source. -#}
{% macro feed_counts(source, columns, count_column, version_column) -%}
    {%- set changes = source_changes(source) -%}
    {%- set names = columns.keys() | list -%}
    {%- set read_version = changes.end if changes.end is not none else 'cast(null as bigint)' -%}
    {%- if not is_incremental() or changes.kind == 'all' %}

with

counted as (

    select
        {%- for name, expression in columns.items() %}
        {{ expression }}{{ ' as ' ~ name if expression != name }},
        {%- endfor %}
        count(*) as {{ count_column }}

    from {{ source }}
    group by {{ columns.values() | join(', ') }}

),

stored as (

    {%- if is_incremental() %}

        select
            {{ names | join(',\n            ') }}
        from {{ this }}

    {%- else %}

        select
            {{ names | join(',\n            ') }}
        from counted
        where false

    {%- endif %}

),

final as (

    select
        {%- for name in names %}
        coalesce(counted.{{ name }}, stored.{{ name }}) as {{ name }},
        {%- endfor %}
        coalesce(counted.{{ count_column }}, 0) as {{ count_column }},
        {{ read_version }} as {{ version_column }},
        false as _delete_row

    from counted
    full outer join stored
        on
            {%- for name in names %}
            {{ 'and ' if not loop.first }}counted.{{ name }} = stored.{{ name }}
            {%- endfor %}

)

    {%- else %}

with

changes as (

    select
        {%- for name, expression in columns.items() %}
        {{ expression }}{{ ' as ' ~ name if expression != name }},
        {%- endfor %}
        _commit_version,
        case
            when _change_type in ('insert', 'update_postimage') then 1
            when _change_type in ('delete', 'update_preimage') then -1
            else 0
        end as change

    from {{ source_changes_relation(source, changes) }}

),

stored as (

    select
        {%- for name in names %}
        stored_counts.{{ name }},
        {%- endfor %}
        stored_counts.{{ count_column }},
        stored_counts.{{ version_column }}

    from {{ this }} as stored_counts
    left semi join changes
        on
            {%- for name in names %}
            {{ 'and ' if not loop.first }}stored_counts.{{ name }} = changes.{{ name }}
            {%- endfor %}

),

counted_changes as (

    select
        {%- for name in names %}
        changes.{{ name }},
        {%- endfor %}
        sum(
            case
                when changes._commit_version > coalesce(stored.{{ version_column }}, -1)
                    then changes.change
                else 0
            end
        ) as change

    from changes
    left join stored
        on
            {%- for name in names %}
            {{ 'and ' if not loop.first }}changes.{{ name }} = stored.{{ name }}
            {%- endfor %}
    group by {% for name in names %}changes.{{ name }}{{ ', ' if not loop.last }}{% endfor %}

),

final as (

    select
        {%- for name in names %}
        counted_changes.{{ name }},
        {%- endfor %}
        coalesce(stored.{{ count_column }}, 0) + counted_changes.change as {{ count_column }},
        {{ read_version }} as {{ version_column }},
        false as _delete_row

    from counted_changes
    left join stored
        on
            {%- for name in names %}
            {{ 'and ' if not loop.first }}counted_changes.{{ name }} = stored.{{ name }}
            {%- endfor %}

)

    {%- endif %}

{{ merge_rows('final') }}
{%- endmacro %}
