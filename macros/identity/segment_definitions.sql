{#- The segments of the `segments` seed (segment_id, description, expression, changes_at), by id. -#}
{% macro segment_definitions(relation=none) -%}
    {%- if not execute or skip_unchanged() -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set source = relation if relation is not none else ref('segments') -%}
    {%- if adapter.get_relation(database=source.database, schema=source.schema, identifier=source.identifier) is none -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set loaded = run_query('select * from ' ~ source ~ ' order by segment_id') -%}
    {%- set segments = [] -%}
    {%- for row in loaded.rows -%}
        {%- do segments.append({
            'segment_id': row['segment_id'],
            'description': row['description'],
            'expression': row['expression'],
            'changes_at': row['changes_at'] if 'changes_at' in loaded.column_names else none,
        }) -%}
    {%- endfor -%}
    {{ return(segments) }}
{%- endmacro %}
