{{ test_not_null_columns('lake.records', ['tenant_id', 'record_id']) }}
