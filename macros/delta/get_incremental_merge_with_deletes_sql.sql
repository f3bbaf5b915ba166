{#- The `merge_with_deletes` incremental strategy. -#}
{% macro get_incremental_merge_with_deletes_sql(arg_dict) -%}
    {%- set target = arg_dict['target_relation'] -%}
    {%- set source = arg_dict['temp_relation'] -%}
    {%- set unique_key = arg_dict['unique_key'] -%}
    {%- set delete_flag = config.get('delete_flag', '_delete_row') -%}
    {%- set keys = [unique_key] if unique_key is string else unique_key -%}
    {%- if not keys -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ model.name ~ " uses incremental_strategy merge_with_deletes, which needs a "
            ~ "unique_key config (a column or a list of columns)."
        ) }}
    {%- endif -%}
    {%- set columns = adapter.get_columns_in_relation(target) | map(attribute='name') | list -%}
    {%- set source_columns = adapter.get_columns_in_relation(source) | map(attribute='name') | list -%}
    {%- if delete_flag not in source_columns and not mart_recomputed_whole() -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ model.name ~ " uses incremental_strategy merge_with_deletes, so its incremental runs must "
            ~ "select a boolean column '" ~ delete_flag ~ "' (true: delete the row); it selects " ~ source_columns | join(', ') ~ "."
        ) }}
    {%- endif -%}
    {%- set partition_by = config.get('partition_by') or [] -%}
    {%- set partition_by = [partition_by] if partition_by is string else partition_by -%}
    {#- liquid clustering columns get the same literal predicates: not partitions, but Delta
        skips the files whose statistics exclude the source's values (one tenant's run reads
        one tenant's files) -#}
    {%- set clustered_by = config.get('liquid_clustered_by') or [] -%}
    {%- set clustered_by = [clustered_by] if clustered_by is string else clustered_by -%}
    {#- only key columns can be predicates: a row cannot change them, so its match is in a
        partition the source names; on any other column a row moving partition would be missed -#}
    {%- set partition_by = (partition_by + clustered_by) | select('in', keys) | unique | list -%}
    {%- set predicates = arg_dict.get('incremental_predicates') or [] -%}
    {%- set predicates = [predicates] if predicates is string else predicates -%}
    {#- a mart's rows of literal keys (merge_rows): the target's files of other keys are skipped -#}
    {%- set predicates = predicates + adapter.merge_key_predicates(target | string, keys) -%}
    {#- comparing every source row with its match reads the whole target: only a table without
        deletion vectors needs it (its MERGE rewrites the matched files even when nothing
        changes, a new version; with deletion vectors a MERGE that changes nothing writes none) -#}
    {%- set compare_rows = not delta_deletion_vectors_enabled(target) -%}
    {#- a model whose rows carry a version (records: ingest_batch_id) names it in
        `merge_change_columns`: equal keys and versions mean equal rows, so the comparison
        (here and in the MERGE's update condition) reads those few columns of the target
        instead of all of them (payloads included) -#}
    {%- set change_columns = config.get('merge_change_columns') or [] -%}
    {%- set change_columns = [change_columns] if change_columns is string else change_columns -%}
    {%- set unknown = change_columns | reject('in', columns) | list -%}
    {%- if unknown -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ model.name ~ " names merge_change_columns " ~ unknown | join(', ')
            ~ " that are not columns of " ~ target ~ " (" ~ columns | join(', ') ~ ")."
        ) }}
    {%- endif -%}
    {%- set compared_columns = (keys + change_columns) if change_columns else (columns | reject('in', [delete_flag]) | list) -%}
    {#- a mart recomputed whole (mart_recomputed_whole) selects its full build's rows, with no
        delete flag: the MERGE updates what differs, inserts what is new and deletes the rows it
        no longer selects -#}
    {%- if mart_recomputed_whole() -%}
        {%- set tenants = mart_tenants_recomputed() -%}
        {%- if tenants is none -%}
            {{ return(delta_merge_upserts_and_deletes(target, source, keys, columns, none, compared_columns=compared_columns, delete_unmatched=true)) }}
        {%- endif -%}
        {#- technique `tenants`: the full build's rows of the tenants written; only their rows
            are compared, read and deleted when no longer selected -#}
        {%- set tenant_list -%}
            {%- for tenant in tenants -%}
                '{{ tenant | replace("\\", "\\\\") | replace("'", "\\'") }}'{{ ', ' if not loop.last }}
            {%- endfor -%}
        {%- endset -%}
        {%- set in_tenants = ('tenant_id in (' ~ tenant_list ~ ')') if tenants else 'false' -%}
        {%- set tenants_source = '(select * from ' ~ source ~ ' where ' ~ in_tenants ~ ')' -%}
        {{ return(delta_merge_upserts_and_deletes(target, tenants_source, keys, columns, none, predicates=['DBT_INTERNAL_DEST.' ~ in_tenants], compared_columns=compared_columns, delete_unmatched='DBT_INTERNAL_DEST.' ~ in_tenants)) }}
    {%- endif -%}
    {#- the count and the MERGE read the source's rows computed once (a Python model's are already) -#}
    {%- if model['language'] == 'sql' -%}
        {%- do adapter.compute_rows_once(source | string) -%}
    {%- endif -%}
    {%- set changes = count_merge_changes(target, source, keys, compared_columns, delete_flag, partition_by, predicates, compare_rows) -%}
    {%- if changes.rows == 0 -%}
        {{ log(model.name ~ ": no row changes, MERGE skipped", info=true) }}
        select 'no changes' as merge_outcome
    {%- else -%}
        {{ delta_merge_upserts_and_deletes(target, source, keys, columns, delete_flag, changes.partition_values, predicates, compared_columns) }}
    {%- endif -%}
{%- endmacro %}
