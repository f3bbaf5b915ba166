{#- run-operation: OPTIMIZE a model's table, by its layout. -#}
{% macro optimize_table(model_name, zorder_by=none, where=none, full=false) -%}
    {%- set relation = ref(model_name) -%}
    {%- set detail = run_query('describe detail ' ~ relation).rows[0] -%}
    {%- set clustering_columns = detail['clusteringColumns'] if 'clusteringColumns' in detail.keys() else none -%}
    {%- if clustering_columns is string -%}
        {#- run_query returns arrays as JSON text -#}
        {%- set clustering_columns = fromjson(clustering_columns) -%}
    {%- endif -%}
    {%- if clustering_columns -%}
        {%- if zorder_by -%}
            {{ exceptions.raise_compiler_error(
                model_name ~ " is liquid-clustered by " ~ clustering_columns | join(', ')
                ~ ": OPTIMIZE clusters it by those, and Delta refuses ZORDER BY there. Drop zorder_by."
            ) }}
        {%- endif -%}
        {%- set statement -%}
            optimize {{ relation }}{% if where %} where {{ where }}{% endif %}{% if full %} full{% endif %}
        {%- endset -%}
    {%- else -%}
        {%- if full -%}
            {{ exceptions.raise_compiler_error(
                "optimize_table: full applies to liquid-clustered tables only; " ~ model_name ~ " is not one."
            ) }}
        {%- endif -%}
        {%- if zorder_by is none -%}
            {%- set nodes = graph.nodes.values() | selectattr('resource_type', 'equalto', 'model')
                | selectattr('name', 'equalto', model_name) | list -%}
            {%- set zorder_by = nodes[0].config.get('zorder_by') if nodes else none -%}
        {%- endif -%}
        {%- if zorder_by is string -%}
            {%- set zorder_by = [zorder_by] -%}
        {%- endif -%}
        {%- set statement -%}
            optimize {{ relation }}
            {%- if where %} where {{ where }}{% endif %}
            {%- if zorder_by %} zorder by ({{ zorder_by | join(', ') }}){% endif %}
        {%- endset -%}
    {%- endif -%}
    {{ log('running: ' ~ statement, info=true) }}
    {%- set result = run_query(statement) -%}
    {%- set metrics = result.columns['metrics'].values()[0] if 'metrics' in result.column_names else none -%}
    {{ log(model_name ~ ' optimized: ' ~ metrics, info=true) }}
{%- endmacro %}
