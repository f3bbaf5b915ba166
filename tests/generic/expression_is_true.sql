{#- Every row (of those matching `row_condition`, if given) satisfies `expression`.
    The one expression test our other generic tests compose on (the dbt-expectations pattern:
    no package hub is reachable here). On a column, the expression is written out in full
    (it may use other columns too); `column_name` only names the test. -#}
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
