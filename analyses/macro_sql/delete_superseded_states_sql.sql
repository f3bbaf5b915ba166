{{ delete_superseded_states_sql('lake.int_record_states', ['acme', 'globex']) }};

{{ delete_superseded_states_sql('lake.int_record_states') }}
