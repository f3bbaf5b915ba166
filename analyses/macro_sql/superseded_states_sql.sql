{{ superseded_states_sql('lake.int_record_states', ['acme']) }};

{{ superseded_states_sql('lake.int_record_states', notifications='lake.record_notifications') }}
