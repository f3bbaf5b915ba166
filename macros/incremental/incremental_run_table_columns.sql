{#- The relation holding exactly the columns an incremental run writes to its table. -#}
{% macro incremental_run_table_columns(temp_relation, strategy, on_schema_change) -%}
    {%- set contract = config.get('contract') -%}
    {%- set checked = (contract and contract.enforced) or on_schema_change != 'ignore' -%}
    {%- if not checked or strategy != 'merge_with_deletes' -%}
        {{ return(temp_relation) }}
    {%- endif -%}
    {%- set delete_flag = config.get('delete_flag', '_delete_row') -%}
    {%- set columns = adapter.get_columns_in_relation(temp_relation) | map(attribute='name') | list -%}
    {%- if delete_flag not in columns -%}
        {{ return(temp_relation) }}
    {%- endif -%}
    {%- set view = temp_relation.incorporate(
        path={"identifier": temp_relation.identifier ~ '__table_columns'}
    ).include(database=false, schema=false) -%}
    {%- call statement('create_table_columns_view') -%}
        create or replace temporary view {{ view }} as
        select * except ({{ adapter.quote(delete_flag) }}) from {{ temp_relation }}
    {%- endcall -%}
    {{ return(view) }}
{%- endmacro %}
