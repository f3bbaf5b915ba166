"""Rename endpoints -> canonical identity, per tenant, incrementally (see the YAML docs)."""

from functools import partial

from pyspark.sql import functions as F

from profile_lake.spark.erasure_filter import erased_by_tenant, without_erased_renames
from profile_lake.spark.identity_renames import resolve_identity_renames


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="merge",
        unique_key=["tenant_id", "identity_id"],
        partition_by=["tenant_id"],
        tblproperties={"delta.dataSkippingStatsColumns": "identity_id,ingest_batch_id"},
    )
    # it runs first, and deletes the rows of the identities a request erases
    dbt.ref("int_erasure_applications")
    renames = without_erased_renames(
        dbt.ref("stg_id_mutations__renames")
        .where("is_accepted")
        .select("tenant_id", "from_id", "to_id", "executed_ts", "seq", "ingest_batch_id"),
        erased_by_tenant(session, dbt.config.meta_get("control_schema")),
    )
    # the YAML's meta sets it (from PROFILE_LAKE_RENAMES_DRIVER_MAX_ROWS); literal default only
    resolve = partial(
        resolve_identity_renames,
        driver_max_rows=int(dbt.config.meta_get("driver_max_rows", 200000)),
    )
    if dbt.is_incremental:
        stored_map = session.table(str(dbt.this))
        watermark = stored_map.agg(F.max("ingest_batch_id")).first()[0]
        return resolve(renames, stored_map, -1 if watermark is None else watermark)
    return resolve(renames, None, -1)
