{% macro delta_table_creations(relation, history=none) -%}
    {%- if history is none -%}
        {%- if not execute
            or adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
            {{ return([]) }}
        {%- endif -%}
        {%- set history = run_query('describe history ' ~ relation) -%}
    {%- endif -%}
    {%- set creations = [] -%}
    {%- for row in history.rows | sort(attribute='version')
        if modules.re.match('(CREATE|REPLACE) ', row['operation']) -%}
        {%- do creations.append(row['version'] | int) -%}
    {%- endfor -%}
    {{ return(creations) }}
{%- endmacro %}
