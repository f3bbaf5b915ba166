"""A tenant backfilled from a legacy snapshot (SPEC.md section 6), with CDC events on both
sides of its as-of time arriving shuffled over two runs (the snapshot itself in the second):
`records` equals the in-order fold of the snapshot and the events, and the snapshot's bad rows
are quarantined in ingest_errors like bad lines."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from profile_lake.generator.legacy import LegacyConfig, generate_legacy
from profile_lake.jsonmerge import SNAPSHOT, SNAPSHOT_SEQ, reference_fold, version_of
from profile_lake.migration.backfill import backfill
from profile_lake.migration.source import data_file_paths
from pytests.support.dbt_runner import run_dbt

pytestmark = pytest.mark.integration

AS_OF = datetime(2024, 6, 1, tzinfo=UTC)
SELECTION = [
    "build",
    *["--select", "+records", "+record_notifications", "+ingest_errors"],
    *["--exclude", "resource_type:test"],
]
SCHEMA = "backfilled"


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def event(record_id: str, op: str, moment: datetime, seq: int, payload: dict | None) -> dict:
    return {
        "tenant_id": "acme",
        "record_id": record_id,
        "op": op,
        "event_ts": iso(moment),
        "seq": seq,
        "record_type": "profile",
        "primary_id": f"email:{record_id}@example.test",
        "payload": payload,
    }


def cdc_events(snapshot_ids: list[str]) -> list[dict]:
    """Events on both sides of the as-of time: before it and at it (they change nothing for a
    record of the snapshot), after it (they fold on top), and a record not in the snapshot."""
    before, after = AS_OF - timedelta(days=1), AS_OF + timedelta(hours=1)
    events = []
    for n, record_id in enumerate(snapshot_ids[:8]):
        events.append(event(record_id, "upsert", before, 0, {"tier": "old", "stale": n}))
        events.append(event(record_id, "upsert", after, n, {"tier": "new", "address": {"zip": n}}))
    events.append(event(snapshot_ids[0], "upsert", AS_OF, 7, {"at_as_of": True}))
    events.append(event(snapshot_ids[1], "delete", before, 1, None))
    events.append(event(snapshot_ids[2], "delete", after + timedelta(minutes=5), 0, None))
    events.append(event(snapshot_ids[3], "delete", after + timedelta(minutes=5), 0, None))
    events.append(event(snapshot_ids[3], "upsert", after + timedelta(minutes=9), 0, {"back": 1}))
    events.append(event("new-1", "upsert", before, 0, {"a": 1, "b": {"c": 2}}))
    events.append(event("new-1", "upsert", after, 0, {"b": {"d": 3}}))
    return events


def write_lines(folder: Path, name: str, messages: list[dict]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("".join(json.dumps(m) + "\n" for m in messages))


def expected_records(snapshot_rows: list[dict], events: list[dict]) -> dict[str, dict]:
    history: dict[str, list] = {}
    for row in snapshot_rows:
        version = version_of(AS_OF, SNAPSHOT_SEQ)
        history.setdefault(row["record_id"], []).append(
            (SNAPSHOT, version, json.loads(row["payload"]))
        )
    for message in events:
        version = version_of(message["event_ts"].replace("Z", "+00:00"), message["seq"])
        history.setdefault(message["record_id"], []).append(
            (message["op"], version, message["payload"])
        )
    folded = {record_id: reference_fold(items) for record_id, items in history.items()}
    return {record_id: payload for record_id, payload in folded.items() if payload is not None}


def records_of(spark) -> dict[str, tuple]:
    """Every row of `records`, with the batch that last changed it."""
    return {
        row["record_id"]: (row["payload"], row["event_ts"], row["ingest_batch_id"])
        for row in spark.table(f"{SCHEMA}.records").collect()
    }


def test_backfill_then_events_on_both_sides_of_the_as_of_time(spark, lake_home, tmp_path) -> None:
    snapshot = tmp_path / "snapshot"
    manifest = generate_legacy(
        LegacyConfig(out=snapshot, tenants=1, dates=2, files_per_partition=2, rows_per_file=6)
    )
    bad = {(row["file"], row["row_index"]) for row in manifest["bad_rows"]}
    good_rows = [
        row
        for path in data_file_paths(snapshot)
        for index, row in enumerate(pq.read_table(snapshot / path).to_pylist())
        if (path, index) not in bad
    ]
    events = cdc_events([row["record_id"] for row in good_rows])
    random.Random(39).shuffle(events)
    landing = tmp_path / "landing"
    env = {"PROFILE_LAKE_SCHEMA": SCHEMA, "PROFILE_LAKE_LANDING": str(landing)}
    target = lake_home / "target" / SCHEMA

    # run 1: half of the events; run 2: the snapshot and the other half
    # op snapshot is only for the files `backfill` lands: elsewhere it is a bad line
    forged = event("forged", SNAPSHOT, AS_OF, SNAPSHOT_SEQ, {"a": 1})
    write_lines(landing / "records", "part-00000.jsonl", [*events[: len(events) // 2], forged])
    run_dbt(SELECTION, env=env, target_path=target)
    backfill(snapshot, landing, "acme", iso(AS_OF))
    write_lines(landing / "records", "part-00001.jsonl", events[len(events) // 2 :])
    run_dbt(SELECTION, env=env, target_path=target)

    before_no_ops = records_of(spark)
    notified_before = spark.table(f"{SCHEMA}.record_notifications").count()
    # run 3, one whole build: lines that change no record (SPEC.md: duplicates and events at or
    # before T change nothing; a late event whose every key a later one replaced is absorbed),
    # and one new record
    no_ops = [
        *events[:5],
        event(good_rows[-1]["record_id"], "upsert", AS_OF - timedelta(days=3), 0, {"x": 1}),
        event("new-1", "upsert", AS_OF - timedelta(days=2), 0, {"a": 5}),
    ]
    fresh = event("new-2", "upsert", AS_OF + timedelta(days=1), 0, {"fresh": True})
    write_lines(landing / "records", "part-00002.jsonl", [*no_ops, fresh])
    run_dbt(["build", "--vars", "{full_checks: true}"], env=env, target_path=target)
    events += [*no_ops, fresh]
    notified = spark.sql(
        f"select record_id, change_type from {SCHEMA}.record_notifications "
        f"order by records_version desc, record_id limit {notified_before + 1}"
    ).collect()
    assert spark.table(f"{SCHEMA}.record_notifications").count() == notified_before + 1
    assert (notified[0]["record_id"], notified[0]["change_type"]) == ("new-2", "insert")
    after_no_ops = records_of(spark)
    assert {k: v for k, v in after_no_ops.items() if k != "new-2"} == before_no_ops

    found = {
        row["record_id"]: row
        for row in spark.sql(f"select * from {SCHEMA}.records where tenant_id = 'acme'").collect()
    }
    expected = expected_records(good_rows, events)
    assert {k: json.loads(v["payload"]) for k, v in found.items()} == expected
    # a record whose last applied event is its snapshot row shows the as-of time
    untouched = good_rows[-1]["record_id"]
    assert found[untouched]["event_ts"].replace(tzinfo=UTC) == AS_OF
    assert expected[good_rows[0]["record_id"]]["tier"] == "new"  # after T: applied
    assert "stale" not in expected[good_rows[0]["record_id"]]  # before T: changes nothing

    errors = spark.sql(
        f"select error_code from {SCHEMA}.ingest_errors where source_file like 'records/backfill-%'"
    ).collect()
    assert sorted(row["error_code"] for row in errors) == sorted(
        ["missing_field", "invalid_identity", "wrong_type", "invalid_record_type"]
    )
    (forged_error,) = spark.sql(
        f"select error_code from {SCHEMA}.ingest_errors "
        "where source_file = 'records/part-00000.jsonl'"
    ).collect()
    assert forged_error["error_code"] == "invalid_op" and "forged" not in found
