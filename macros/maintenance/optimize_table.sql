{#- `dbt run-operation optimize_table --args '{model_name: records, zorder_by: [primary_id]}'`:
    compacts a model's Delta table (OPTIMIZE), optionally Z-ordering by columns, optionally only
    the partitions matching `where` (e.g. "tenant_id = 'acme'"). Prints Delta's metrics. -#}
{% macro optimize_table(model_name, zorder_by=none, where=none) -%}
    {%- set relation = ref(model_name) -%}
    {%- if zorder_by is string -%}
        {%- set zorder_by = [zorder_by] -%}
    {%- endif -%}
    {%- set statement -%}
        optimize {{ relation }}
        {%- if where %} where {{ where }}{% endif %}
        {%- if zorder_by %} zorder by ({{ zorder_by | join(', ') }}){% endif %}
    {%- endset -%}
    {{ log('running: ' ~ statement, info=true) }}
    {%- set result = run_query(statement) -%}
    {%- set metrics = result.columns['metrics'].values()[0] if 'metrics' in result.column_names else none -%}
    {{ log(model_name ~ ' optimized: ' ~ metrics, info=true) }}
{%- endmacro %}
