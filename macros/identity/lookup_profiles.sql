{#- run-operation: profiles by identity, from identity_index (see _macros.yml). -#}
{% macro lookup_profiles(tenant_id=none, identity_id=none, keys=none, keys_table=none) -%}
    {%- set all_keys = [] -%}
    {%- if tenant_id is not none and identity_id is not none -%}
        {%- do all_keys.append([tenant_id, identity_id]) -%}
    {%- elif tenant_id is not none or identity_id is not none -%}
        {{ exceptions.raise_compiler_error("lookup_profiles: give both tenant_id and identity_id.") }}
    {%- endif -%}
    {%- for key in keys or [] -%}
        {%- do all_keys.append(key) -%}
    {%- endfor -%}
    {%- if keys_table is not none -%}
        {%- set loaded = run_query('select distinct tenant_id, identity_id from ' ~ keys_table) -%}
        {%- for row in loaded.rows -%}
            {%- do all_keys.append([row[0], row[1]]) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- if all_keys | length == 0 -%}
        {{ exceptions.raise_compiler_error(
            "lookup_profiles: give tenant_id and identity_id, keys: [[tenant_id, identity_id], ...], or keys_table.") }}
    {%- endif -%}
    {%- set found = run_query(
        'select tenant_id, identity_id, to_json(struct(*)) as profile_json from ('
        ~ identity_lookup_sql(all_keys) ~ ') as found') -%}
    {%- set found_keys = [] -%}
    {%- for row in found.rows -%}
        {%- do found_keys.append([row[0], row[1]]) -%}
        {{ print(row[2]) }}
    {%- endfor -%}
    {%- for key in all_keys -%}
        {%- if [key[0], key[1]] not in found_keys -%}
            {{ print(tojson({'tenant_id': key[0], 'identity_id': key[1], 'profile_id': none})) }}
        {%- endif -%}
    {%- endfor -%}
{%- endmacro %}
