"""Rename chains per tenant, incrementally: the Spark side of `int_identities_renamed`.

The stored table maps every rename endpoint of a tenant to its canonical identity
(:func:`profile_lake.identity.resolve_renames` over the tenant's whole rename history). A run
reads only the tenants with renames staged after the table's watermark; for each of them one
pandas group holds the stored map, the history already applied and the new renames, and
:func:`profile_lake.identity.apply_renames` folds the new renames onto the map, or replays the
tenant's whole history when a new rename is not newer than every applied one (a late rename
changes what every later rename saw). Only rows whose canonical identity changed (or that are
new) are returned, stamped with the run's newest rename batch: that stamp is the watermark, and
the stored map always equals the map of the renames up to it (a run that changed nothing leaves
the map equal to that of its older history, so folding its renames again is exact).
"""

from __future__ import annotations

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from profile_lake.identity.renames import apply_renames

MAP_SCHEMA = "tenant_id string, identity_id string, canonical_id string, ingest_batch_id bigint"
_ROWS_COLUMNS = ["tenant_id", "kind", "from_id", "to_id", "version_micros", "seq"]


def _renames(frame: pd.DataFrame, kind: str) -> list[tuple[tuple[int, int], str, str]]:
    part = frame[frame["kind"] == kind]
    return [
        ((int(micros), int(seq)), from_id, to_id)
        for from_id, to_id, micros, seq in zip(
            part["from_id"], part["to_id"], part["version_micros"], part["seq"], strict=True
        )
    ]


def _resolve_tenant(run_batch_id: int):
    def resolve(frame: pd.DataFrame) -> pd.DataFrame:
        tenant_id = frame["tenant_id"].iloc[0]
        stored = frame[frame["kind"] == "current"]
        current_map = dict(zip(stored["from_id"], stored["to_id"], strict=True))
        resolved = apply_renames(
            current_map, _renames(frame, "new"), applied=_renames(frame, "applied")
        )
        changed = [
            (identity, canonical)
            for identity, canonical in resolved.items()
            if current_map.get(identity) != canonical
        ]
        return pd.DataFrame(
            {
                "tenant_id": [tenant_id] * len(changed),
                "identity_id": [identity for identity, _ in changed],
                "canonical_id": [canonical for _, canonical in changed],
                "ingest_batch_id": [run_batch_id] * len(changed),
            },
            columns=["tenant_id", "identity_id", "canonical_id", "ingest_batch_id"],
        )

    return resolve


def _as_rows(renames: DataFrame, kind: str) -> DataFrame:
    return renames.select(
        "tenant_id",
        F.lit(kind).alias("kind"),
        "from_id",
        "to_id",
        F.unix_micros("executed_ts").alias("version_micros"),
        F.col("seq").cast("bigint").alias("seq"),
    )


def resolve_identity_renames(
    renames: DataFrame, stored_map: DataFrame | None, watermark: int
) -> DataFrame:
    """Changed rows of the identity map of every tenant with renames staged after `watermark`.

    `renames`: accepted renames (tenant_id, from_id, to_id, executed_ts, seq, ingest_batch_id),
    the whole staged history. `stored_map`: the table so far (None on a first run, with
    `watermark` -1). Returns MAP_SCHEMA rows to merge on (tenant_id, identity_id).
    """
    new = renames.where(F.col("ingest_batch_id") > watermark)
    run_batch_id = new.agg(F.max("ingest_batch_id")).first()[0]
    spark = renames.sparkSession
    if run_batch_id is None:  # nothing new: no job, no rows, no table version
        return spark.createDataFrame([], MAP_SCHEMA)
    touched = new.select("tenant_id").distinct()
    rows = _as_rows(new, "new").unionByName(
        _as_rows(
            renames.where(F.col("ingest_batch_id") <= watermark).join(
                touched, "tenant_id", "left_semi"
            ),
            "applied",
        )
    )
    if stored_map is not None:
        rows = rows.unionByName(
            stored_map.join(touched, "tenant_id", "left_semi").select(
                "tenant_id",
                F.lit("current").alias("kind"),
                F.col("identity_id").alias("from_id"),
                F.col("canonical_id").alias("to_id"),
                F.lit(0).cast("bigint").alias("version_micros"),  # unused: no nulls, so
                F.lit(0).cast("bigint").alias("seq"),  # pandas keeps the columns int64
            )
        )
    return (
        rows.select(*_ROWS_COLUMNS)
        .groupBy("tenant_id")
        .applyInPandas(_resolve_tenant(int(run_batch_id)), MAP_SCHEMA)
    )
