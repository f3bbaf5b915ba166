{{ count_merge_changes_sql(
    'lake.records', 'records__dbt_tmp', ['tenant_id', 'record_id'],
    ['tenant_id', 'record_id', 'ingest_batch_id'], '_delete_row', ['tenant_id'],
    ['DBT_INTERNAL_DEST.ingest_batch_id > 0']
) }};

{{ count_merge_changes_sql(
    'lake.records', 'records__dbt_tmp', ['tenant_id', 'record_id'],
    ['tenant_id', 'record_id'], '_delete_row', ['tenant_id'], compare_rows=false
) }};

{{ count_merge_changes_sql(
    'lake.records', 'records__dbt_tmp', ['tenant_id', 'record_id'],
    ['tenant_id', 'record_id'], '_delete_row', compare_rows=false
) }}
