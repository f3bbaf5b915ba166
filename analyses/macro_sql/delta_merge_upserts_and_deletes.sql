{{ delta_merge_upserts_and_deletes(
    'lake.records', 'records__dbt_tmp', ['tenant_id', 'record_id'],
    ['tenant_id', 'record_id', 'payload', 'ingest_batch_id'], '_delete_row',
    {'tenant_id': ['acme', "o'hara"]}, ['DBT_INTERNAL_DEST.ingest_batch_id > 0'],
    ['tenant_id', 'record_id', 'ingest_batch_id']
) }}
