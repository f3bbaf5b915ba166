{#- Whether runs take locks (var run_locks; auto: when the metastore is shared). -#}
{% macro run_locks_enabled() -%}
    {%- set setting = var('run_locks', 'auto') -%}
    {%- if setting == 'auto' -%}
        {{ return(adapter.metastore_is_shared()) }}
    {%- endif -%}
    {{ return(setting in (true, 'true', 'on')) }}
{%- endmacro %}
