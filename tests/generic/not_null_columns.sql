{#- None of `columns` is null: one scan for all of them, each failing row naming its nulls. -#}
{% test not_null_columns(model, columns) %}

with

checked as (

    select
        concat_ws(
            ', '
            {%- for column in columns %},
            case when {{ column }} is null then '{{ column }}' end
            {%- endfor %}
        ) as null_columns,
        *
    from {{ model }}
    where
        {%- for column in columns %}
        {% if not loop.first %}or {% endif %}{{ column }} is null
        {%- endfor %}

)

select * from checked

{% endtest %}
