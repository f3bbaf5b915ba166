{#- What an incremental mart reads of a source's change feed this run. -#}
{% macro source_changes(source) -%}
    {#- a unit test reads fixtures, not tables: it builds the mart from nothing -#}
    {%- if not execute or model.resource_type == 'unit_test' -%}
        {{ return({'kind': 'all', 'start': none, 'end': none}) }}
    {%- endif -%}
    {%- if skip_unchanged() -%}
        {{ return({'kind': 'none', 'start': none, 'end': none}) }}
    {%- endif -%}
    {{ return(adapter.source_changes(this | string, source | string, is_incremental())) }}
{%- endmacro %}
