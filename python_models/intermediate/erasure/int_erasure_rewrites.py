"""The staged lines an erasure removed or rewrote, per request and table (see the YAML docs)."""

from pyspark.sql import functions as F

from profile_lake.spark.dbt_refs import ref_table_name
from profile_lake.spark.erasure_rewrite import (
    REMOVALS_SCHEMA,
    rewrite_erased_lines,
    staged_streams,
)
from profile_lake.tenant_scope import parse_tenant_scope


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append")
    # after the readers that find an erasure's lines by their ids (int_record_states folds the
    # records they touch again) and after ingest_errors records this run's problems
    dbt.ref("int_record_states")
    dbt.ref("int_erasure_applications")  # a request fixed: the erased set grew
    dbt.ref("stg_id_mutations__renames")
    dbt.ref("stg_entity_names__updates")
    dbt.ref("stg_records__changes")
    dbt.ref("ingest_errors")
    ingest_errors = ref_table_name(dbt, "ingest_errors")
    staging_schema = ref_table_name(dbt, "stg_records__changes").rsplit(".", 1)[0]
    # meta_get with literal keys: dbt passes a Python model only the meta keys its code names
    tenants = parse_tenant_scope(
        dbt.config.meta_get("tenant_scope"), dbt.config.meta_get("tenant_id_pattern")
    )
    landing_schema = dbt.config.meta_get("landing_schema")
    removals = rewrite_erased_lines(
        session,
        dbt.config.meta_get("control_schema"),
        staged_streams(landing_schema, staging_schema),
        ingest_errors,
        tenants,
        # a full refresh stages every landing file again: every line is looked at, and the
        # table counts what the rewrite removed from the tables as they are now
        every_line=not dbt.is_incremental,
    )
    return session.createDataFrame(removals, REMOVALS_SCHEMA).withColumn(
        "at", F.current_timestamp()
    )
