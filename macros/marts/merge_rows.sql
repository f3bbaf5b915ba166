{#- The final select of an incremental mart: with its delete flag on incremental runs. -#}
{% macro merge_rows(final, keys=none, order_by=none) -%}
    {%- if is_incremental() -%}
        {%- if keys is not none and execute -%}
            {%- do adapter.record_merge_keys(this | string, keys) -%}
        {%- endif -%}
        select * from {{ final }}
    {%- else -%}
        select * except (_delete_row) from {{ final }}
        where not _delete_row
        {%- if order_by %}
        order by {{ order_by | join(', ') }}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}
