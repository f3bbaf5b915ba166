{#- dbt's is_incremental(), but false for a mart this run recomputes whole (mart_recomputed_whole):
    it renders its full build's SQL, which its MERGE then writes (only the rows that differ). -#}
{% macro is_incremental() -%}
    {{ return(dbt.is_incremental() and not mart_recomputed_whole()) }}
{%- endmacro %}
