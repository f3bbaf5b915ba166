{#- The versions of a Delta table still in its history that created or replaced it (CREATE
    TABLE, CREATE OR REPLACE TABLE, REPLACE TABLE, with or without AS SELECT), oldest first;
    none while parsing or when the table does not exist. A replacement's change feed deletes
    every row of the table it replaced and inserts every row of the new one. `history`: the
    table's DESCRIBE HISTORY when the caller has read it already. -#}
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
