{% macro identity_lookup_sql(keys) -%}
    {%- if keys | length == 0 -%}
        {{ exceptions.raise_compiler_error("identity_lookup_sql: give at least one [tenant_id, identity_id] key.") }}
    {%- endif -%}
    {%- set by_tenant = {} -%}
    {%- for key in keys -%}
        {%- if key | length != 2 -%}
            {{ exceptions.raise_compiler_error("identity_lookup_sql: each key is [tenant_id, identity_id]; got " ~ key) }}
        {%- endif -%}
        {%- do by_tenant.setdefault(key[0], []).append(key[1]) -%}
    {%- endfor -%}
    {%- set key_filter -%}
        {%- for tenant_id, identity_ids in by_tenant.items() %}
            {{ "or " if not loop.first }}(tenant_id = {{ sql_string_literal(tenant_id) }} and identity_id in (
                {%- for identity_id in identity_ids | unique -%}
                    {{ sql_string_literal(identity_id) }}{{ ", " if not loop.last }}
                {%- endfor -%}
            ))
        {%- endfor -%}
    {%- endset -%}
    with

    matched_identities as (

        select
            tenant_id,
            identity_id,
            canonical_id,
            profile_id

        from {{ ref('identity_index') }}
        where {{ key_filter }}

    ),

    matched_profiles as (

        select
            tenant_id,
            profile_id,
            identities,
            identity_names,
            live_records,
            identity_count,
            record_count,
            record_count_by_type,
            first_event_ts,
            last_event_ts,
            last_event_ts_by_type

        from {{ ref('profiles') }}
        where
        {%- for tenant_id in by_tenant %}
            {{ "or " if not loop.first }}(tenant_id = {{ sql_string_literal(tenant_id) }} and profile_id in (
                select matched_identities.profile_id from matched_identities
                where matched_identities.tenant_id = {{ sql_string_literal(tenant_id) }}
            ))
        {%- endfor %}

    ),

    final as (

        select
            matched_identities.tenant_id,
            matched_identities.identity_id,
            matched_identities.canonical_id,
            matched_profiles.profile_id,
            matched_profiles.identities,
            matched_profiles.identity_names,
            matched_profiles.live_records,
            matched_profiles.identity_count,
            matched_profiles.record_count,
            matched_profiles.record_count_by_type,
            matched_profiles.first_event_ts,
            matched_profiles.last_event_ts,
            matched_profiles.last_event_ts_by_type

        from matched_identities
        inner join matched_profiles
            on
                matched_identities.tenant_id = matched_profiles.tenant_id
                and matched_identities.profile_id = matched_profiles.profile_id

    )

    select * from final
{%- endmacro %}
