{% macro assert_incremental_run_contract(table_columns_relation) -%}
    {%- set contract = config.get('contract') -%}
    {%- if contract and contract.enforced and model['language'] == 'sql' -%}
        {%- do get_assert_columns_equivalent('select * from ' ~ table_columns_relation) -%}
    {%- endif -%}
{%- endmacro %}
