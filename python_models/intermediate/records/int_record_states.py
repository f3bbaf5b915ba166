"""Per-record states: every accepted change folded in, in any order (see the YAML docs)."""

from pyspark.sql import functions as F

from profile_lake.spark.records import RECORD_KEY, fold_record_changes


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="merge",
        unique_key=["tenant_id", "record_id"],
        partition_by=["tenant_id"],
        tblproperties={
            # statistics for look-ups and the watermark, never for the large JSON columns
            "delta.dataSkippingStatsColumns": "record_id,last_ingest_batch_id,event_ts",
        },
    )
    changes = dbt.ref("stg_records__changes").where("is_accepted")
    if dbt.is_incremental:
        states = session.table(str(dbt.this))
        watermark = states.agg(F.max("last_ingest_batch_id")).first()[0]
        changes = changes.where(F.col("ingest_batch_id") > (-1 if watermark is None else watermark))
        touched = changes.select(*RECORD_KEY).distinct()
        prior_states = states.join(touched, RECORD_KEY, "left_semi")
    else:
        prior_states = None
    return fold_record_changes(changes, prior_states)
