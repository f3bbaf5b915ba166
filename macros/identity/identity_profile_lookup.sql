{#- The look-up from any identity to its profile: every identity of identity_map (renamed-away
    ones too) with its canonical identity and the profile holding that canonical identity
    (profile_identities), per tenant. identity_index stores it, laid out for one-key fetches;
    profiles places each live record in the profile of its primary identity with it. Identities
    whose canonical identity is in no live record have no profile and are left out. Every
    identity of a live record is in identity_map (it takes in every identity of every accepted
    record change), so an inner join loses no record. -#}
{% macro identity_profile_lookup() -%}
    select
        identity_map.tenant_id,
        identity_map.identity_id,
        identity_map.canonical_id,
        profile_identities.profile_id

    from {{ ref('identity_map') }} as identity_map
    inner join {{ ref('profile_identities') }} as profile_identities
        on
            identity_map.tenant_id = profile_identities.tenant_id
            and identity_map.canonical_id = profile_identities.identity_id
{%- endmacro %}
