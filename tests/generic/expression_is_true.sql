{#- Every row (of those matching `row_condition`, if given) satisfies `expression`.
    The one expression test our other generic tests compose on (the dbt-expectations pattern:
    no package hub is reachable here). -#}
{% test expression_is_true(model, expression, row_condition=none) %}

with

checked as (

    select * from {{ model }}
    where
        {% if row_condition %}({{ row_condition }}) and {% endif %}
        not coalesce({{ expression }}, false)

)

select * from checked

{% endtest %}
