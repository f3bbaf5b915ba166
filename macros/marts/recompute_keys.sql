{#- An incremental mart's keys to recompute (`name`), evaluated once a run; `every`: all keys. -#}
{% macro recompute_keys(name, columns, sql, every=false) -%}
    {%- set evaluate = execute and model.resource_type != 'unit_test' and not skip_unchanged() -%}
    {{ return(adapter.recompute_keys(
        this | string, name, sql, columns, is_incremental() and not every, evaluate,
        var('mart_literal_key_limit', none)
    )) }}
{%- endmacro %}
