{#- The combination of `columns` is unique (multi-column keys). -#}
{% test unique_combination(model, columns) %}

with

keyed as (

    select
        {%- for column in columns %}
        {{ column }},
        {%- endfor %}
        count(*) as occurrences

    from {{ model }}
    group by {{ columns | join(', ') }}

),

duplicated as (

    select * from keyed
    where occurrences > 1

)

select * from duplicated

{% endtest %}
