{#- Per stream and landing file: lines landed, accepted and quarantined, each counted from its
    own table, so that `lines_landed = lines_accepted + lines_quarantined` is a real check. -#}
{%- set streams = {
    'records': 'stg_records__changes',
    'id_mutations': 'stg_id_mutations__renames',
    'entity_names': 'stg_entity_names__updates',
} %}

with

{% for stream, staging_model in streams.items() %}
{{ stream }}_landed as (

    select
        '{{ stream }}' as stream,
        source_file,
        count(*) as lines_landed,
        max(ingested_at) as last_ingested_at

    from {{ source(stream, 'landed_lines') }}
    group by source_file

),

{{ stream }}_accepted as (

    select
        source_file,
        count(*) as lines_accepted

    from {{ ref(staging_model) }}
    where is_accepted
    group by source_file

),

{% endfor %}
landed as (

    {% for stream in streams -%}
    select * from {{ stream }}_landed
    {% if not loop.last %}union all
    {% endif -%}
    {%- endfor %}

),

accepted as (

    {% for stream in streams -%}
    select '{{ stream }}' as stream, source_file, lines_accepted from {{ stream }}_accepted
    {% if not loop.last %}union all
    {% endif -%}
    {%- endfor %}

),

quarantined as (

    select
        stream,
        source_file,
        count(distinct line_number) as lines_quarantined,
        count(*) as problems_found

    from {{ ref('ingest_errors') }}
    group by stream, source_file

),

final as (

    select
        landed.stream,
        landed.source_file,
        landed.lines_landed,
        coalesce(accepted.lines_accepted, 0) as lines_accepted,
        coalesce(quarantined.lines_quarantined, 0) as lines_quarantined,
        coalesce(quarantined.problems_found, 0) as problems_found,
        landed.last_ingested_at

    from landed
    left join accepted
        on
            landed.stream = accepted.stream
            and landed.source_file = accepted.source_file
    left join quarantined
        on
            landed.stream = quarantined.stream
            and landed.source_file = quarantined.source_file

)

select * from final
