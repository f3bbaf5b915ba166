{% macro landing_streams() -%}
    {{ return({
        'records': 'stg_records__changes',
        'id_mutations': 'stg_id_mutations__renames',
        'entity_names': 'stg_entity_names__updates',
        'erasures': 'stg_erasures__requests',
    }) }}
{%- endmacro %}
