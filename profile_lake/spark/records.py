"""Fold accepted record changes into per-record states (the order-independent JSON merge).

The state of a record is a versioned merge tree (profile_lake.jsonmerge): applying a record's
events in any order, in any number of runs, gives the fold of the events in (event_ts, seq)
order. Spark groups the new events per record, joins the record's stored state, and one Arrow
batch at a time the pure Python merge continues each state (`mapInArrow`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from profile_lake.jsonmerge import merge_events_json

RECORD_KEY = ["tenant_id", "record_id"]
# Keys of up to this many changes are broadcast to the look-up of their prior states (about
# 50 bytes a key in memory: 2M keys take about 100 MB of the driver).
DEFAULT_BROADCAST_MAX_CHANGES = 2_000_000
FOLD_RECURSION_LIMIT = 5_000
# The promoted columns come from the record's newest event (SPEC.md: of the last applied event).
NEWEST_COLUMNS = ["op", "record_type", "primary_id", "related_ids", "event_ts", "seq"]
FOLDED_COLUMNS = pa.schema(
    [("state_json", pa.string()), ("payload", pa.string()), ("is_deleted", pa.bool_())]
)


def current_states(states: DataFrame) -> DataFrame:
    """The newest row of each record among `states` (int_record_states keeps every version a run
    appended; a record's versions have increasing last_ingest_batch_id, one row per batch)."""
    newest_first = Window.partitionBy(*RECORD_KEY).orderBy(F.col("last_ingest_batch_id").desc())
    return (
        states.withColumn("_version_rank", F.row_number().over(newest_first))
        .where(F.col("_version_rank") == 1)
        .drop("_version_rank")
    )


def prior_states(
    states: DataFrame,
    changes: DataFrame,
    broadcast_max_changes: int = DEFAULT_BROADCAST_MAX_CHANGES,
) -> DataFrame:
    """The current state of each record `changes` touch, from the stored `states`.

    When the changes number at most `broadcast_max_changes`, their record keys are broadcast,
    so each task filters the states it reads; a sort-merge semi-join would first shuffle every
    stored state, merge trees and payloads (2 GB at 10M records). With 1.7M changes against 10M
    records the look-up took 16 s broadcast and 38 s shuffled. Adaptive execution broadcasts by
    itself only under 10 MB of keys (about 200K records), and only after the states' shuffle
    has started: 50 s with its threshold raised.
    """
    touched = changes.select(*RECORD_KEY).distinct()
    # 0 never broadcasts (nor counts); the count stops past the bound
    if (
        broadcast_max_changes > 0
        and changes.limit(broadcast_max_changes + 1).count() <= broadcast_max_changes
    ):
        touched = F.broadcast(touched)
    return current_states(states.join(touched, RECORD_KEY, "left_semi"))


def fold_row(prior_state_json: str | None, events: list[dict]) -> tuple[str, str | None, bool]:
    """One record's new state, payload and is_deleted, from its prior state and the `events`
    column's structs (op, event_micros, seq, payload)."""
    merged = merge_events_json(
        prior_state_json,
        [(e["op"], (e["event_micros"], e["seq"]), e["payload"]) for e in events],
    )
    return merged.state_json, merged.payload_json, merged.payload_json is None


def _fold_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    priors = batch.column("prior_state_json").to_pylist()
    event_lists = batch.column("events").to_pylist()
    folded = [fold_row(prior, events) for prior, events in zip(priors, event_lists, strict=True)]
    states, payloads, deleted = zip(*folded, strict=True) if folded else ((), (), ())
    passthrough = [
        name for name in batch.schema.names if name not in ("prior_state_json", "events")
    ]
    return pa.RecordBatch.from_arrays(
        [batch.column(name) for name in passthrough]
        + [
            pa.array(states, pa.string()),
            pa.array(payloads, pa.string()),
            pa.array(deleted, pa.bool_()),
        ],
        names=[*passthrough, *FOLDED_COLUMNS.names],
    )


def fold_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    # A payload may nest as deep as the parse step lets through (999 levels); the merge and
    # the JSON codec recurse about twice per level, past Python's default limit of 1000.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), FOLD_RECURSION_LIMIT))
    for batch in batches:
        yield _fold_batch(batch)


def _version(prefix: str = "") -> F.Column:
    return F.struct(F.unix_micros(F.col(f"{prefix}event_ts")), F.col(f"{prefix}seq"))


def fold_record_changes(changes: DataFrame, prior_states: DataFrame | None) -> DataFrame:
    """New states of every record with changes.

    `changes`: accepted change events (tenant_id, record_id, op, record_type, primary_id,
    related_ids, payload, event_ts, seq, ingest_batch_id). `prior_states`: stored states
    (the int_record_states columns) of at least the records with changes; None on a first run.
    """
    prepared = fold_input(changes, prior_states)
    folded = prepared.mapInArrow(fold_batches, folded_schema(prepared))
    prior_visible = F.lit(None) if prior_states is None else F.col(PRIOR_VISIBLE)
    return folded.withColumn("changes_record", ~visible_state().eqNullSafe(prior_visible)).drop(
        PRIOR_VISIBLE
    )


# What `records` shows of a state: a version whose visible state equals the one it continues (a
# duplicate, an event at or before a snapshot's as-of time, a late event the fold absorbs)
# still keeps its merge tree, but changes no row of `records` and sends no notification.
VISIBLE_COLUMNS = ["record_type", "primary_id", "related_ids", "event_ts", "payload"]
PRIOR_VISIBLE = "prior_visible_state"


def visible_state() -> F.Column:
    """The visible state of a live record's row (null for a deleted one): what `records`
    holds of it."""
    return F.when(~F.col("is_deleted"), F.struct(*VISIBLE_COLUMNS))


def fold_input(changes: DataFrame, prior_states: DataFrame | None) -> DataFrame:
    """One row per record with changes: its newest promoted columns, what it was before
    (prior_change_columns), its prior state (`prior_state_json`) and its new events (`events`),
    what the fold continues."""
    per_record = changes.groupBy(*RECORD_KEY).agg(
        F.collect_list(
            F.struct(
                "op",
                F.unix_micros("event_ts").alias("event_micros"),
                "seq",
                "payload",
            )
        ).alias("events"),
        F.max_by(F.struct(*NEWEST_COLUMNS), _version()).alias("newest"),
        F.max("ingest_batch_id").alias("last_ingest_batch_id"),
    )
    if prior_states is None:
        joined = per_record.select(
            "*",
            F.lit(None).cast("string").alias("prior_state_json"),
            F.lit(None).cast(per_record.schema["newest"].dataType).alias("prior_newest"),
            F.lit(False).alias("prior_is_live"),
        )
    else:
        prior = prior_states.select(
            *RECORD_KEY,
            F.col("state_json").alias("prior_state_json"),
            F.struct(*NEWEST_COLUMNS).alias("prior_newest"),
            (~F.col("is_deleted")).alias("prior_is_live"),
            visible_state().alias(PRIOR_VISIBLE),
        )
        joined = per_record.join(prior, RECORD_KEY, "left").withColumn(
            "prior_is_live", F.coalesce("prior_is_live", F.lit(False))
        )
    # an erasure's tombstone has no newest event (profile_lake.spark.erasure_refold)
    newest_wins = (
        F.col("prior_newest").isNull()
        | F.col("prior_newest.event_ts").isNull()
        | (
            F.struct(F.unix_micros("newest.event_ts"), F.col("newest.seq"))
            >= F.struct(F.unix_micros("prior_newest.event_ts"), F.col("prior_newest.seq"))
        )
    )
    newest = F.when(newest_wins, F.col("newest")).otherwise(F.col("prior_newest"))
    return joined.select(
        *RECORD_KEY,
        *[newest[name].alias(name) for name in NEWEST_COLUMNS],
        "last_ingest_batch_id",
        *prior_change_columns(),
        *([] if prior_states is None else [PRIOR_VISIBLE]),
        "prior_state_json",
        "events",
    )


def prior_change_columns() -> list[F.Column]:
    """What the version changes, from the state it continues: whether the record was live
    before it, and that live state's identities (null otherwise). record_notifications and the
    identity graph read the versions with these instead of `records`' change feed
    (docs/notifications.md)."""
    live = F.col("prior_is_live")
    return [
        live,
        F.when(live, F.col("prior_newest.primary_id")).alias("prior_primary_id"),
        F.when(live, F.col("prior_newest.related_ids")).alias("prior_related_ids"),
    ]


def folded_schema(prepared: DataFrame) -> StructType:
    """The fold's output: `prepared`'s columns but the prior state and the events, then the
    folded columns."""
    schema = prepared.drop("prior_state_json", "events").schema
    for name, arrow_type in zip(FOLDED_COLUMNS.names, FOLDED_COLUMNS.types, strict=True):
        spark_type = {"string": "string", "bool": "boolean"}[str(arrow_type)]
        schema = schema.add(name, spark_type)
    return schema
