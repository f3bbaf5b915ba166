{{ test_table_checks(
    'lake.records',
    unique=[['tenant_id', 'record_id'], ['tenant_id', 'primary_id', 'ingest_batch_id']],
    not_null=['tenant_id', 'record_id'],
    expressions=[
        'ingest_batch_id >= 0',
        {'expression': "record_type rlike '^[a-z]+$'", 'row_condition': "tenant_id = 'acme'"},
    ],
    accepted_values=[
        {'column': 'record_type', 'values': ['person', 'account']},
        {'column': 'seq', 'values': [1, 2], 'row_condition': 'event_ts is not null'},
    ],
    relationships=[
        {'column': 'tenant_id', 'to': 'lake.tenants', 'field': 'tenant_id'},
        {'column': 'primary_id', 'to': 'lake.identity_map', 'field': 'identity_id', 'row_condition': 'seq > 0'},
    ],
) }}
