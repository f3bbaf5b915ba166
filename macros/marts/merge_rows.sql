{#- The final select of an incremental mart: with its delete flag on incremental runs. -#}
{% macro merge_rows(final, order_by=none) -%}
    {%- if is_incremental() -%}
        select * from {{ final }}
    {%- else -%}
        select * except (_delete_row) from {{ final }}
        where not _delete_row
        {%- if order_by %}
        order by {{ order_by | join(', ') }}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}
