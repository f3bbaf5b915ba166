{#- dbt checks a model's enforced contract when it builds the table (first build, full
    refresh), not when an incremental run merges or appends into it: such a run would write
    whatever its SQL now selects. This runs dbt's own check (names and types against the YAML,
    the same contract error) on what the run writes, before it writes. -#}
{% macro assert_incremental_run_contract(table_columns_relation) -%}
    {%- set contract = config.get('contract') -%}
    {%- if contract and contract.enforced and model['language'] == 'sql' -%}
        {%- do get_assert_columns_equivalent('select * from ' ~ table_columns_relation) -%}
    {%- endif -%}
{%- endmacro %}
