{% macro contract_constraints_apply() -%}
    {%- set contract = config.get('contract') -%}
    {{ return(contract is not none and contract.enforced
        and model.language == 'sql'
        and config.get('file_format') == 'delta') }}
{%- endmacro %}
