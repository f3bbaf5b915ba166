"""Rename endpoints -> canonical identity, per tenant, incrementally (see the YAML docs)."""

from pyspark.sql import functions as F

from profile_lake.spark.identity_renames import resolve_identity_renames


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="merge",
        unique_key=["tenant_id", "identity_id"],
        partition_by=["tenant_id"],
        tblproperties={"delta.dataSkippingStatsColumns": "identity_id,ingest_batch_id"},
    )
    renames = (
        dbt.ref("stg_id_mutations__renames")
        .where("is_accepted")
        .select("tenant_id", "from_id", "to_id", "executed_ts", "seq", "ingest_batch_id")
    )
    if dbt.is_incremental:
        stored_map = session.table(str(dbt.this))
        watermark = stored_map.agg(F.max("ingest_batch_id")).first()[0]
        return resolve_identity_renames(renames, stored_map, -1 if watermark is None else watermark)
    return resolve_identity_renames(renames, None, -1)
