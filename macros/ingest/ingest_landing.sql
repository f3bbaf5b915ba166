{#- on-run-start: stage every landing file not yet staged, exactly once. -#}
{% macro ingest_landing() -%}
    {{ return(adapter.dispatch('ingest_landing', 'profile_lake')()) }}
{%- endmacro %}

{% macro default__ingest_landing() -%}
    {{ exceptions.raise_compiler_error(
        "ingest_landing needs the profile_lake_spark adapter (profiles/profiles.yml: "
        ~ "type: profile_lake_spark); target '" ~ target.name ~ "' is of type '" ~ target.type ~ "'."
    ) }}
{%- endmacro %}

{% macro profile_lake_spark__ingest_landing() -%}
    {%- if execute and flags.WHICH in ('run', 'build') and var('ingest_landing', true) -%}
        {#- checks var tenants before a full refresh drops the landing tables -#}
        {%- do run_tenant_scope() -%}
        {%- set left_out = incremental_models_left_out() if flags.FULL_REFRESH else [] -%}
        {%- set restage = flags.FULL_REFRESH and left_out | length == 0 -%}
        {%- if flags.FULL_REFRESH and not restage -%}
            {{ log(
                "ingest: the landing tables are kept (a full refresh of a selection): incremental "
                ~ "models left out of it (" ~ left_out | join(', ') ~ ") hold watermarks on their "
                ~ "ingest batches. The selected models are rebuilt from them.", info=true
            ) }}
        {%- endif -%}
        {%- if restage -%}
            {#- other runs may be reading the landing tables: drop them only once every
                tenant's lock is held (acquire_tenant_locks then keeps it) -#}
            {%- do acquire_tenant_locks() -%}
        {%- endif -%}
        {%- set max_files = var('ingest_max_files_per_batch', 200) | int -%}
        {%- if max_files < 1 -%}
            {{ exceptions.raise_compiler_error(
                "var ingest_max_files_per_batch must be a positive number of files, got "
                ~ var('ingest_max_files_per_batch')
            ) }}
        {%- endif -%}
        {%- do adapter.ingest_landing(
            var('landing_path'),
            landing_schema(),
            var('lake_home') ~ '/checkpoints/landing_ingest/' ~ landing_schema(),
            var('tenant_id_pattern'),
            max_files,
            restage,
            run_lock_table() if run_locks_enabled() else none,
            invocation_id,
            var('ingest_lock_wait_seconds', 3600),
            var('tenant_lock_lease_seconds', 600),
            target.schema ~ '_control'
        ) -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
