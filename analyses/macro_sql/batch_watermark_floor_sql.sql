{{ batch_watermark_floor_sql(
    'lake.stg_records__changes', 'lake.int_record_states', 'ingest_batch_id',
    'last_ingest_batch_id'
) }}
