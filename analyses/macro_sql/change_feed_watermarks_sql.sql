{{ change_feed_watermarks_sql(
    api.Relation.create(schema='lake', identifier='records'),
    api.Relation.create(schema='lake', identifier='record_notifications'),
    'records_version', [api.Relation.create(schema='lake', identifier='int_record_states')]
) }}
