{{ superseded_states_sql('lake.int_record_states', ['acme']) }};

{{ superseded_states_sql('lake.int_record_states', notifications='lake.record_notifications') }};

{{ superseded_states_sql(
    'lake.int_record_states',
    notifications='lake.record_notifications',
    graph='lake_intermediate.int_profile_identities_resolved',
) }}
