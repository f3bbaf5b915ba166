{#- on-run-start: read the identity_rules seed's CSV and stop the run, naming the row, when a
    row breaks SPEC.md section 5 (unknown rule or namespace, a limit that is not a positive
    integer, a malformed pattern), before anything is ingested or built. The rows are checked by
    profile_lake.identity.rules through the adapter, the same code the graph model reads the
    loaded seed with. -#}
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
