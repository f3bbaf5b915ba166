{#- on-run-start: stop the run at a bad row of the identity_rules seed. -#}
{% macro check_identity_rules() -%}
    {{ return(adapter.dispatch('check_identity_rules', 'profile_lake')()) }}
{%- endmacro %}

{% macro default__check_identity_rules() -%}
    {{ return('') }}
{%- endmacro %}

{% macro profile_lake_spark__check_identity_rules() -%}
    {%- if execute and flags.WHICH in ('run', 'build', 'seed') -%}
        {%- set seeds = graph.nodes.values()
            | selectattr('resource_type', 'equalto', 'seed')
            | selectattr('name', 'equalto', 'identity_rules')
            | list -%}
        {%- if seeds | length == 1 -%}
            {%- set seed = seeds[0] -%}
            {%- set problem = adapter.check_identity_rules(seed.root_path ~ '/' ~ seed.original_file_path) -%}
            {%- if problem -%}
                {{ exceptions.raise_compiler_error(
                    problem ~ ". Fix the row in " ~ seed.original_file_path
                    ~ " (rules: blocked, namespace_limit, max_identities; SPEC.md section 5)."
                ) }}
            {%- endif -%}
        {%- endif -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
