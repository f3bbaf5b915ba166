{#- The `append_new_rows` incremental strategy. -#}
{% macro get_incremental_append_new_rows_sql(arg_dict) -%}
    {%- set target = arg_dict['target_relation'] -%}
    {%- set source = arg_dict['temp_relation'] -%}
    {%- set columns = adapter.get_columns_in_relation(target) | map(attribute='name') | list -%}
    {%- set found = run_query('select 1 as found from ' ~ source ~ ' limit 1') -%}
    {%- if found.rows | length == 0 -%}
        {{ log(model.name ~ ": no new rows, INSERT skipped", info=true) }}
        select 'no new rows' as append_outcome
    {%- else -%}
        insert into {{ target }} ({{ columns | join(', ') }})
        select {{ columns | join(', ') }} from {{ source }}
    {%- endif -%}
{%- endmacro %}
