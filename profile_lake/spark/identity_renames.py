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

A run's renames are usually few: when the new renames plus the touched tenants' applied history
and stored rows number at most `driver_max_rows`, they are collected and folded in the driver,
and the changed rows come back as a DataFrame of the driver's rows. That saves the shuffle and
the Python workers of applyInPandas (half a second warm, more in a fresh process), and the
tenants' filter is a literal list, so Delta reads only their partitions. Bigger runs take the
distributed path.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

import pandas as pd
from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from profile_lake.identity.renames import apply_renames

MAP_SCHEMA = "tenant_id string, identity_id string, canonical_id string, ingest_batch_id bigint"
_ROWS_COLUMNS = ["tenant_id", "kind", "from_id", "to_id", "version_micros", "seq"]
# Runs with at most this many rows (new renames, their tenants' history and map) fold in the driver.
DEFAULT_DRIVER_MAX_ROWS = 200_000


def _renames(frame: pd.DataFrame, kind: str) -> list[tuple[tuple[int, int], str, str]]:
    part = frame[frame["kind"] == kind]
    return [
        ((int(micros), int(seq)), from_id, to_id)
        for from_id, to_id, micros, seq in zip(
            part["from_id"], part["to_id"], part["version_micros"], part["seq"], strict=True
        )
    ]


def changed_canonicals(
    current_map: dict[str, str],
    new: list[tuple[tuple[int, int], str, str]],
    applied: list[tuple[tuple[int, int], str, str]],
) -> list[tuple[str, str]]:
    """(identity, canonical) of one tenant's map rows that the new renames change or add."""
    resolved = apply_renames(current_map, new, applied=applied)
    return [
        (identity, canonical)
        for identity, canonical in resolved.items()
        if current_map.get(identity) != canonical
    ]


def fold_rows_by_tenant(
    rows: Iterable[Sequence], run_batch_id: int
) -> list[tuple[str, str, str, int]]:
    """The driver path: `_ROWS_COLUMNS` rows of any tenants -> their changed MAP_SCHEMA rows."""
    current: dict[str, dict[str, str]] = defaultdict(dict)
    renames: dict[str, dict[str, list]] = defaultdict(lambda: {"new": [], "applied": []})
    for tenant_id, kind, from_id, to_id, micros, seq in rows:
        if kind == "current":
            current[tenant_id][from_id] = to_id
        else:
            renames[tenant_id][kind].append(((int(micros), int(seq)), from_id, to_id))
    return [
        (tenant_id, identity, canonical, run_batch_id)
        for tenant_id, tenant_renames in sorted(renames.items())
        if tenant_renames["new"]
        for identity, canonical in changed_canonicals(
            current[tenant_id], tenant_renames["new"], tenant_renames["applied"]
        )
    ]


def _resolve_tenant(run_batch_id: int):
    def resolve(frame: pd.DataFrame) -> pd.DataFrame:
        tenant_id = frame["tenant_id"].iloc[0]
        stored = frame[frame["kind"] == "current"]
        current_map = dict(zip(stored["from_id"], stored["to_id"], strict=True))
        changed = changed_canonicals(
            current_map, _renames(frame, "new"), applied=_renames(frame, "applied")
        )
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


def _as_rows(renames: DataFrame, kind: str, *extra_columns: str) -> DataFrame:
    return renames.select(
        "tenant_id",
        F.lit(kind).alias("kind"),
        "from_id",
        "to_id",
        F.unix_micros("executed_ts").alias("version_micros"),
        F.col("seq").cast("bigint").alias("seq"),
        *extra_columns,
    )


def _stored_rows(stored_map: DataFrame) -> DataFrame:
    return stored_map.select(
        "tenant_id",
        F.lit("current").alias("kind"),
        F.col("identity_id").alias("from_id"),
        F.col("canonical_id").alias("to_id"),
        F.lit(0).cast("bigint").alias("version_micros"),  # unused: no nulls, so
        F.lit(0).cast("bigint").alias("seq"),  # pandas keeps the columns int64
    )


def resolve_identity_renames(
    renames: DataFrame,
    stored_map: DataFrame | None,
    watermark: int,
    driver_max_rows: int = DEFAULT_DRIVER_MAX_ROWS,
) -> DataFrame:
    """Changed rows of the identity map of every tenant with renames staged after `watermark`.

    `renames`: accepted renames (tenant_id, from_id, to_id, executed_ts, seq, ingest_batch_id),
    the whole staged history. `stored_map`: the table so far (None on a first run, with
    `watermark` -1). Returns MAP_SCHEMA rows to merge on (tenant_id, identity_id), folded in the
    driver when the run's rows number at most `driver_max_rows` (0: always distributed).
    """
    new = renames.where(F.col("ingest_batch_id") > watermark)
    spark = renames.sparkSession
    new_rows = _as_rows(new, "new", "ingest_batch_id").limit(driver_max_rows + 1).collect()
    if not new_rows:  # nothing new: no more jobs, no rows, no table version
        return spark.createDataFrame([], MAP_SCHEMA)
    # a bigger run goes distributed after one bounded collect (driver_max_rows + 1 rows at most)
    if len(new_rows) <= driver_max_rows:
        folded = _fold_in_driver(renames, stored_map, watermark, new_rows, driver_max_rows)
        if folded is not None:
            return spark.createDataFrame(folded, MAP_SCHEMA)
    return _fold_distributed(renames, stored_map, watermark)


def _fold_in_driver(
    renames: DataFrame,
    stored_map: DataFrame | None,
    watermark: int,
    new_rows: list[Row],
    driver_max_rows: int,
) -> list[tuple[str, str, str, int]] | None:
    """The changed rows, folded here; None when the touched tenants' rows are too many."""
    touched = sorted({row["tenant_id"] for row in new_rows})
    older = _as_rows(
        renames.where((F.col("ingest_batch_id") <= watermark) & F.col("tenant_id").isin(touched)),
        "applied",
    )
    if stored_map is not None:
        older = older.unionByName(_stored_rows(stored_map.where(F.col("tenant_id").isin(touched))))
    room = driver_max_rows - len(new_rows)
    older_rows = older.select(*_ROWS_COLUMNS).limit(room + 1).collect()
    if len(older_rows) > room:
        return None
    run_batch_id = max(int(row["ingest_batch_id"]) for row in new_rows)
    rows = [[row[column] for column in _ROWS_COLUMNS] for row in (*new_rows, *older_rows)]
    return fold_rows_by_tenant(rows, run_batch_id)


def _fold_distributed(
    renames: DataFrame, stored_map: DataFrame | None, watermark: int
) -> DataFrame:
    new = renames.where(F.col("ingest_batch_id") > watermark)
    run_batch_id = new.agg(F.max("ingest_batch_id")).first()[0]
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
        rows = rows.unionByName(_stored_rows(stored_map.join(touched, "tenant_id", "left_semi")))
    return (
        rows.select(*_ROWS_COLUMNS)
        .groupBy("tenant_id")
        .applyInPandas(_resolve_tenant(int(run_batch_id)), MAP_SCHEMA)
    )
