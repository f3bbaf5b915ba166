{#- Post-hook of every model: after an incremental write, compact the partitions it left with too many small files. -#}
{% macro compact_written_table() -%}
    {%- if execute and config.get('materialized') == 'incremental' and config.get('file_format') == 'delta' -%}
        {%- set done = adapter.compact_written_table(
            this | string,
            config.get('zorder_by'),
            var('compaction_max_small_files', none),
            run_tenant_scope(),
        ) -%}
        {%- if done -%}
            {{ log(done, info=true) }}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}
