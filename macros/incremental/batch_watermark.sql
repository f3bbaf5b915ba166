{#- The newest ingest batch an incremental model has already handled (-1 on its first run), so
    `where ingest_batch_id > {{ batch_watermark() }}` reads only new batches. The watermark is
    the model's own data, so it moves in the same Delta commit as the rows. -#}
{% macro batch_watermark(column='ingest_batch_id', condition=none) -%}
    {%- if is_incremental() -%}
        (select coalesce(max({{ column }}), -1) from {{ this }}{% if condition %} where {{ condition }}{% endif %})
    {%- else -%}
        -1
    {%- endif -%}
{%- endmacro %}
