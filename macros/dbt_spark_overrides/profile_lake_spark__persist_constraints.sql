{#- The constraints went in with the table's CREATE (profile_lake_spark__tblproperties_clause);
    dbt-spark's ALTER after it would scan the table once per constraint -#}
{% macro profile_lake_spark__persist_constraints(relation, model) -%}
{%- endmacro %}
