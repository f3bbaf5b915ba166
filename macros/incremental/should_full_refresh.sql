{#- dbt's should_full_refresh(), but false for a model whose meta says
    kept_by_selective_full_refresh when a full refresh leaves incremental models out: a model
    that cannot be rebuilt from the landing tables (stg_erasures__requests keeps no request's
    text) keeps its rows and runs incrementally, while a full refresh of the whole project,
    which stages the landing files again, rebuilds it. -#}
{% macro should_full_refresh() -%}
    {%- set config_full_refresh = config.get('full_refresh') -%}
    {%- if config_full_refresh is none -%}
        {%- set config_full_refresh = flags.FULL_REFRESH -%}
    {%- endif -%}
    {%- if config_full_refresh
        and model.config.get('meta', {}).get('kept_by_selective_full_refresh')
        and incremental_models_left_out() | length > 0 -%}
        {{ return(false) }}
    {%- endif -%}
    {{ return(config_full_refresh) }}
{%- endmacro %}
