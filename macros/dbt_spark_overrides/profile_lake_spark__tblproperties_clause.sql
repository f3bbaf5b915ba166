{#- dbt-spark's tblproperties clause, with an enforced contract's constraints as Delta's own
    (profile_lake.contract_constraints): checked on every write from the first row, no read -#}
{% macro profile_lake_spark__tblproperties_clause() -%}
    {{ adapter.create_tblproperties_sql(config.get('tblproperties'), model, contract_constraints_apply()) }}
{%- endmacro %}
