"""Per-record states: every accepted change folded in, in any order (see the YAML docs)."""

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from profile_lake.spark.erasure_filter import erased_by_tenant, without_erased_lines
from profile_lake.spark.erasure_refold import (
    CHANGE_REASON,
    pending_erasures,
    refolded_versions,
    touched_records,
)
from profile_lake.spark.records import RECORD_KEY, fold_record_changes, prior_states
from profile_lake.tenant_scope import parse_tenant_scope


def new_changes(changes: DataFrame, states: DataFrame) -> DataFrame:
    """Changes of batches newer than the newest one each tenant's states hold: runs scoped to
    other tenants advance this table on their own, so the watermark is per tenant."""
    watermarks = states.groupBy("tenant_id").agg(F.max("last_ingest_batch_id").alias("watermark"))
    return (
        changes.join(F.broadcast(watermarks), "tenant_id", "left")
        .where(F.col("ingest_batch_id") > F.coalesce(F.col("watermark"), F.lit(-1)))
        .drop("watermark")
    )


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        # a run appends the new version of each record it touches: a blind INSERT of those rows,
        # where a MERGE joined every file (a run's changes reach most of them)
        incremental_strategy="append_new_rows",
        # a lake built before prior_is_live and the prior identities gains them on its next run
        on_schema_change="append_new_columns",
        partition_by=["tenant_id"],
        tblproperties={
            # statistics for look-ups and the watermark, never for the large JSON columns
            "delta.dataSkippingStatsColumns": "record_id,last_ingest_batch_id,event_ts",
            # delete_superseded_states marks the versions it removes instead of copying files
            "delta.enableDeletionVectors": "true",
        },
    )
    changes = dbt.ref("stg_records__changes").where("is_accepted")
    # the requests applied, and when: an erasure folds the records it touches again
    applications = dbt.ref("int_erasure_applications")
    requests = dbt.ref("stg_erasures__requests")
    # meta_get with a literal key: dbt passes a Python model only the meta keys its code names
    tenants = parse_tenant_scope(
        dbt.config.meta_get("tenant_scope"), dbt.config.meta_get("tenant_id_pattern")
    )
    if tenants is not None:
        changes = changes.where(F.col("tenant_id").isin(*tenants))
    erased = erased_by_tenant(session, dbt.config.meta_get("control_schema"), tenants)
    if not dbt.is_incremental:
        return with_reason(fold_record_changes(without_erased_lines(changes, erased), None))
    states = session.table(str(dbt.this))
    new = without_erased_lines(new_changes(changes, states), erased)
    # the YAML's meta sets it (from PROFILE_LAKE_STATES_BROADCAST_MAX_CHANGES); literal default
    broadcast_max_changes = int(dbt.config.meta_get("broadcast_max_changes", 2000000))
    pending = None if erased is None else pending_erasures(applications, requests, states).collect()
    if not pending:
        return with_reason(
            fold_record_changes(
                new, prior_states(states, new, broadcast_max_changes=broadcast_max_changes)
            )
        )
    pending_frame = session.createDataFrame(pending, "tenant_id string, erasure_batch_id bigint")
    # the keys of one person's records and of those relating to them: few, read once (a
    # cached frame would outlive the model, which dbt consumes after it returns)
    touched_keys = touched_records(changes, erased, pending_frame)
    touched = session.createDataFrame(touched_keys.collect(), touched_keys.schema)
    untouched = new.join(touched, RECORD_KEY, "left_anti")
    folded = with_reason(
        fold_record_changes(
            untouched,
            prior_states(states, untouched, broadcast_max_changes=broadcast_max_changes),
        )
    )
    refolded = refolded_versions(changes, erased, pending_frame, touched, states)
    return folded.unionByName(refolded.select(*folded.columns))


def with_reason(versions):
    """Versions of new changes: no reason (an erasure's say `erasure`)."""
    return versions.withColumn(CHANGE_REASON, F.lit(None).cast("string"))
