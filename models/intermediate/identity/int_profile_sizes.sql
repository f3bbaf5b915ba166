{#- Per tenant: how many profiles have each size (identities, live records). Kept up from the
    change feed of `profiles`, so `identity_graph_health` measures a tenant's profile sizes from
    these few rows instead of every profile. -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key=['tenant_id', 'identity_count', 'record_count'],
        tblproperties={'delta.enableChangeDataFeed': 'true'},
        post_hook="{{ record_consumed_versions() }}",
    )
}}

{{ feed_counts(
    ref('profiles'),
    {'tenant_id': 'tenant_id', 'identity_count': 'identity_count', 'record_count': 'record_count'},
    'profile_count',
    'profiles_version',
) }}
