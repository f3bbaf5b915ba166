{{ test_expression_is_true('lake.records', 'ingest_batch_id >= 0', row_condition="tenant_id = 'acme'") }}
