{#- Every row (of those matching `row_condition`, if given) satisfies `expression`. -#}
{% test expression_is_true(model, expression, row_condition=none, column_name=none) %}

with

checked as (

    select * from {{ model }}
    where
        {% if row_condition %}({{ row_condition }}) and {% endif %}
        not coalesce({{ expression }}, false)

)

select * from checked

{% endtest %}
