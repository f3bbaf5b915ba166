{{ test_unique_combination('lake.records', ['tenant_id', 'record_id']) }}
