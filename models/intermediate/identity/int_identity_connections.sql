{#- Per canonical identity: how many other identities live records link it to, and how many
    live records carry it. A run recounts the identities the graph restamped (every identity of
    a profile its changes reach, before and after) and the far ends of their cut links, which
    sit in other profiles; of the touched tenants' records, only the links with an end among
    them are canonicalized and counted. The final full outer join is for a full build, whose
    keys are the graph's identities and whose counts are every live record's. -#}
{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key=['tenant_id', 'identity_id'],
        partition_by=['tenant_id'],
        zorder_by=['identity_id'],
        tblproperties={
            'delta.dataSkippingStatsColumns': 'identity_id,linked_identities,record_count',
            'delta.enableChangeDataFeed': 'true',
            'delta.enableDeletionVectors': 'true',
        },
        post_hook="{{ record_consumed_versions() }}",
    )
}}

{%- set resolved_changes = source_changes(ref('int_profile_identities_resolved')) %}
{#- A link cut by a linking rule joins two profiles, so a rename at one end changes what the
    other end links to although the graph does not restamp it. #}
{%- set identities_to_count_sql -%}
    with

    restamped_identities as (

        {{ changed_keys(ref('int_profile_identities_resolved'), resolved_changes, ['tenant_id', 'identity_id']) }}

    ),

    cut_links as (

        select
            tenant_id,
            identity_id,
            inline(cut_links) as (other_id, rule, namespace, event_ts, record_id)

        from {{ ref('int_profile_identities_resolved') }}
        where
            size(cut_links) > 0
            and tenant_id in (select restamped_identities.tenant_id from restamped_identities)

    ),

    cut_link_ends as (

        select
            cut_links.tenant_id,
            cut_links.identity_id,
            cut_links.other_id

        from cut_links
        left semi join restamped_identities
            on
                cut_links.tenant_id = restamped_identities.tenant_id
                and cut_links.identity_id = restamped_identities.identity_id

        union

        select
            cut_links.tenant_id,
            cut_links.identity_id,
            cut_links.other_id

        from cut_links
        left semi join restamped_identities
            on
                cut_links.tenant_id = restamped_identities.tenant_id
                and cut_links.other_id = restamped_identities.identity_id

    )

    select
        tenant_id,
        identity_id

    from restamped_identities

    union

    select
        tenant_id,
        identity_id

    from cut_link_ends

    union

    select
        tenant_id,
        other_id as identity_id

    from cut_link_ends
{%- endset %}
{%- set identities_to_count = recompute_keys(
    'identities_to_count', ['tenant_id', 'identity_id'], identities_to_count_sql
) %}
{%- set tenants_to_count = recompute_keys(
    'tenants_to_count',
    ['tenant_id'],
    'select distinct tenant_id from (' ~ identities_to_count.body ~ ') as identities_to_count',
) %}
{#- every raw identity that may be renamed to an identity to count (`identity_map` holds
    every identity of a live record, renamed or not) #}
{%- set raw_identities_sql -%}
    select
        tenant_id,
        identity_id

    from {{ ref('identity_map') }}
    where {{ key_filter(identities_to_count, ['tenant_id', 'canonical_id']) }}
{%- endset %}
{%- set raw_identities = recompute_keys(
    'raw_identities', ['tenant_id', 'identity_id'], raw_identities_sql
) %}

with

identities_to_count as (

    {{ identities_to_count.body }}

),

raw_identities as (

    {{ raw_identities.body }}

),

records as (

    select
        tenant_id,
        record_id,
        primary_id,
        related_ids

    from {{ ref('records') }}
    where {{ key_filter(tenants_to_count, ['tenant_id']) }}

),

identity_map as (

    select
        tenant_id,
        identity_id,
        canonical_id

    from {{ ref('identity_map') }}
    where {{ key_filter(tenants_to_count, ['tenant_id']) }}

),

record_ends as (

    {#- a live record links its primary identity to each related one (SPEC.md section 4) -#}
    select
        tenant_id,
        record_id,
        primary_id,
        explode_outer(related_ids) as related_id

    from records

),

end_identities as (

    select
        tenant_id,
        record_id,
        primary_id,
        related_id,
        explode(array(primary_id, related_id)) as end_id

    from record_ends

),

touching_ends as (

    {#- the links with an end renamed to an identity to count (a link met twice counts once) #}
    select
        end_identities.tenant_id,
        end_identities.record_id,
        end_identities.primary_id,
        end_identities.related_id

    from end_identities
    left semi join raw_identities
        on
            end_identities.tenant_id = raw_identities.tenant_id
            and end_identities.end_id = raw_identities.identity_id

),

canonical_ends as (

    {#- inner joins, so that the few touching links are broadcast and `identity_map` is only
        scanned, never shuffled: it holds every identity of a live record; a record with no
        related identity looks its primary identity up twice -#}
    select
        touching_ends.tenant_id,
        touching_ends.record_id,
        primary_map.canonical_id as primary_id,
        case when touching_ends.related_id is not null then related_map.canonical_id end as related_id

    from touching_ends
    inner join identity_map as primary_map
        on
            touching_ends.tenant_id = primary_map.tenant_id
            and touching_ends.primary_id = primary_map.identity_id
    inner join identity_map as related_map
        on
            touching_ends.tenant_id = related_map.tenant_id
            and coalesce(touching_ends.related_id, touching_ends.primary_id) = related_map.identity_id

),

identity_ends as (

    {#- each link seen from both of its ends, in one pass over the links -#}
    select
        tenant_id,
        record_id,
        inline(array(
            named_struct('identity_id', primary_id, 'linked_id', related_id),
            named_struct('identity_id', related_id, 'linked_id', primary_id)
        )) as (identity_id, linked_id)

    from canonical_ends

),

connections as (

    select
        tenant_id,
        identity_id,
        count(distinct case when linked_id != identity_id then linked_id end) as linked_identities,
        count(distinct record_id) as record_count

    from identity_ends
    where
        identity_id is not null
        and {{ key_filter(identities_to_count, ['tenant_id', 'identity_id']) }}
    group by tenant_id, identity_id

),

final as (

    select
        ---------- ids
        coalesce(connections.tenant_id, identities_to_count.tenant_id) as tenant_id,
        coalesce(connections.identity_id, identities_to_count.identity_id) as identity_id,

        ---------- numbers
        connections.linked_identities,
        connections.record_count,

        ---------- merge control: an identity no live record carries any more is gone
        connections.identity_id is null as _delete_row

    from identities_to_count
    full outer join connections
        on
            identities_to_count.tenant_id = connections.tenant_id
            and identities_to_count.identity_id = connections.identity_id

)

{{ merge_rows('final', identities_to_count) }}
