select line
from lake_landing.records
where ingest_batch_id > {{ batch_watermark_sql('lake.stg_records__changes', condition='is_accepted') }}
