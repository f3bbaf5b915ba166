{#- run-operation: VACUUM a model's table, keeping at least Delta's safe 7 days. -#}
{% macro vacuum_table(model_name, retain_hours=168) -%}
    {%- set minimum_hours = 168 -%}
    {%- if retain_hours | int < minimum_hours -%}
        {{ exceptions.raise_compiler_error(
            "vacuum_table keeps at least " ~ minimum_hours ~ " hours (Delta's safe default); got retain_hours="
            ~ retain_hours ~ ". Readers of older snapshots and the change feed need them."
        ) }}
    {%- endif -%}
    {%- set relation = ref(model_name) -%}
    {%- set hours = retain_hours | int -%}
    {{ log('running: vacuum ' ~ relation ~ ' retain ' ~ hours ~ ' hours', info=true) }}
    {%- do run_query('vacuum ' ~ relation ~ ' retain ' ~ hours ~ ' hours') -%}
{%- endmacro %}
