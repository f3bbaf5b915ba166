"""Per-record states: every accepted change folded in, in any order (see the YAML docs)."""

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from profile_lake.spark.records import RECORD_KEY, fold_record_changes
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
        incremental_strategy="merge_with_deletes",
        unique_key=["tenant_id", "record_id"],
        partition_by=["tenant_id"],
        tblproperties={
            # statistics for look-ups and the watermark, never for the large JSON columns
            "delta.dataSkippingStatsColumns": "record_id,last_ingest_batch_id,event_ts",
            # a MERGE marks replaced states in deletion vectors instead of copying the rest of
            # every file it touches (a run's changes touch most files), and one that changes
            # nothing writes no version, so the strategy skips comparing rows before it
            "delta.enableDeletionVectors": "true",
        },
    )
    changes = dbt.ref("stg_records__changes").where("is_accepted")
    tenants = parse_tenant_scope((dbt.config.get("meta") or {}).get("tenant_scope"))
    if tenants is not None:
        changes = changes.where(F.col("tenant_id").isin(*tenants))
    if not dbt.is_incremental:
        return fold_record_changes(changes, None)
    states = session.table(str(dbt.this))
    changes = new_changes(changes, states)
    touched = changes.select(*RECORD_KEY).distinct()
    prior_states = states.join(touched, RECORD_KEY, "left_semi")
    # states are never deleted (a delete is a tombstone later events continue from)
    return fold_record_changes(changes, prior_states).withColumn("_delete_row", F.lit(False))
