{#- Per tenant: how many identities of its profiles each namespace holds (the part of the
    identity before the first `:`). Kept up from the change feed of `profile_identities`, so
    `identity_graph_health` reads these few rows instead of every identity. -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key=['tenant_id', 'identity_namespace'],
        tblproperties={'delta.enableChangeDataFeed': 'true'},
        post_hook="{{ record_consumed_versions() }}",
    )
}}

{{ feed_counts(
    ref('profile_identities'),
    {'tenant_id': 'tenant_id', 'identity_namespace': "split_part(identity_id, ':', 1)"},
    'identity_count',
    'profile_identities_version',
) }}
