{#- on_schema_change for an incremental run (contract: columns only added). -#}
{% macro apply_incremental_schema_changes(on_schema_change, source_relation, target_relation) -%}
    {%- set contract = config.get('contract') -%}
    {%- if not (contract and contract.enforced and on_schema_change == 'append_new_columns') -%}
        {{ return(process_schema_changes(on_schema_change, source_relation, target_relation)) }}
    {%- endif -%}
    {%- set changes = check_for_schema_changes(source_relation, target_relation) -%}
    {%- set dropped = changes['target_not_in_source'] | map(attribute='name') | list -%}
    {%- set retyped = [] -%}
    {%- for change in changes['new_target_types'] -%}
        {%- set old = changes['target_columns'] | selectattr('name', 'equalto', change['column_name']) | first -%}
        {%- do retyped.append(change['column_name'] ~ ' (' ~ old.data_type ~ ', now ' ~ change['new_type'] ~ ')') -%}
    {%- endfor -%}
    {%- if dropped or retyped -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ model.name ~ " has an enforced contract, which changes only by adding columns, "
            ~ "but its table " ~ target_relation ~ " has "
            ~ (("columns the model no longer selects: " ~ dropped | join(', ')) if dropped else "")
            ~ ("; and " if dropped and retyped else "")
            ~ (("columns whose type changed: " ~ retyped | join(', ')) if retyped else "")
            ~ ". Keep the columns as they were, or rebuild the table: dbt build --full-refresh --select "
            ~ model.name ~ "."
        ) }}
    {%- endif -%}
    {%- if changes['source_not_in_target'] -%}
        {%- do sync_column_schemas(on_schema_change, target_relation, changes) -%}
    {%- endif -%}
    {{ return(changes) }}
{%- endmacro %}
