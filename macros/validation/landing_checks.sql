{% macro landing_checks(fields, landed) -%}
landed_lines as (

    select
        ingest_batch_id,
        source_file,
        line_number,
        tenant_id as staged_tenant_id,
        is_valid_utf8,
        line,
        coalesce(is_erased, false) as is_erased,
        ingested_at

    from {{ landed }}
    where
        {{ in_run_tenant_scope('tenant_id') }}
        and ingest_batch_id > {{ batch_watermark(tenant_column='staged_tenant_id', row_tenant_column='tenant_id') }}

),

tenants as (

    select
        tenant_id,
        max_payload_bytes,
        split(record_types, '[|]') as record_types

    from {{ ref('tenants') }}

),

parsed as (

    select
        landed_lines.*,
        {{ parse_landing_line('line', 'is_valid_utf8') }}

    from landed_lines

),

extracted as (

    select
        parsed.*,
        {%- for field in fields %}
        variant_get(message, '$.{{ field.name }}') as {{ field.name }}__raw{{ ',' if not loop.last }}
        {%- endfor %}

    from parsed

),

checked as (

    select
        extracted.*,
        {%- for field in fields %}
        {{ landing_field_state(field) }} as {{ field.name }}__state{{ ',' if not loop.last }}
        {%- endfor %}

    from extracted

),

converted as (

    select
        checked.*,
        {%- for field in fields %}
        {{ landing_field_value(field) }} as {{ field.name }}{{ ',' if not loop.last }}
        {%- endfor %}

    from checked

),

with_tenant as (

    select
        converted.*,
        tenants.tenant_id is not null as tenant_is_known,
        tenants.record_types as tenant_record_types,
        tenants.max_payload_bytes as tenant_max_payload_bytes

    from converted
    left join tenants
        on converted.tenant_id = tenants.tenant_id

),

found as (

    select
        with_tenant.*,
        {{ landing_convert_problems(fields) }} as convert_problems,
        {{ landing_validate_problems(fields) }} as validate_problems

    from with_tenant

),

judged as (

    select
        found.*,
        -- a line failing parse or conversion stops there; validation reports every rule broken;
        -- a line an erasure removed (its text gone) has none: it is counted as erased
        case
            when is_erased then filter(validate_problems, erased_line_problem -> false)
            when parse_problem is not null then array(parse_problem)
            when size(convert_problems) > 0 then convert_problems
            else validate_problems
        end as problems

    from found

)
{%- endmacro %}
