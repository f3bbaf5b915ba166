"""What the run-skipping and backfill scenarios land on the small lake (conftest.py), each with
tenants and landing files of its own; the hostile corpus is hostile_corpus.py."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq

from profile_lake.generator.legacy import LegacyConfig, generate_legacy
from profile_lake.jsonmerge import SNAPSHOT, SNAPSHOT_SEQ
from profile_lake.migration.source import data_file_paths

# ---------- run skipping (test_run_skipping.py): tenants umbrella and stark

SKIPPING_TENANTS = ("umbrella", "stark")


def skipping_record(
    tenant: str, record_id: str, primary: str, related: list[str], minute: int
) -> dict:
    return {
        "tenant_id": tenant,
        "record_id": record_id,
        "op": "upsert",
        "event_ts": f"2026-01-01T00:{minute:02d}:00+00:00",
        "seq": 0,
        "record_type": "profile",
        "primary_id": primary,
        "related_ids": related,
        "payload": {"n": minute},
    }


# the first build's: records of both tenants, a rename and a name of umbrella's
SKIPPING_FIRST = {
    "records": [
        skipping_record("umbrella", "u1", "email:u1@x.test", ["cookie:u1"], 1),
        skipping_record("umbrella", "u2", "email:u2@x.test", ["cookie:u1"], 2),
        skipping_record("stark", "s1", "email:s1@x.test", [], 3),
    ],
    "id_mutations": [
        {
            "tenant_id": "umbrella",
            "from_id": "cookie:u1",
            "to_id": "cookie:u9",
            "executed_ts": "2026-01-01T01:00:00+00:00",
            "seq": 0,
        }
    ],
    "entity_names": [
        {
            "tenant_id": "umbrella",
            "id": "email:u1@x.test",
            "name": "Ann",
            "updated_ts": "2026-01-01T00:00:00+00:00",
            "seq": 0,
        }
    ],
}
# later, one new record: a records file, nothing else
SKIPPING_NEW_RECORDS = {"records": [skipping_record("stark", "s2", "email:s2@x.test", [], 9)]}

# ---------- the backfill (test_backfill.py): tenant hooli

BACKFILL_TENANT = "hooli"
AS_OF = datetime(2024, 6, 1, tzinfo=UTC)
# the backfill's last run: the records pipeline only, no test
RECORDS_SELECTION = [
    "build",
    *["--select", "+records", "+record_notifications", "+ingest_errors"],
    *["--exclude", "resource_type:test"],
]


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def event(record_id: str, op: str, moment: datetime, seq: int, payload: dict | None) -> dict:
    return {
        "tenant_id": BACKFILL_TENANT,
        "record_id": record_id,
        "op": op,
        "event_ts": iso(moment),
        "seq": seq,
        "record_type": "profile",
        "primary_id": f"email:{record_id}@example.test",
        "payload": payload,
    }


def legacy_snapshot(folder: Path) -> list[dict]:
    """A legacy snapshot of the tenant's records, partitioned by tenant and date, under
    `folder`; returns its good rows (the bad ones, four, each break another rule). The generator
    writes its first tenant (acme): its folder becomes the tenant's."""
    manifest = generate_legacy(
        LegacyConfig(out=folder, tenants=1, dates=2, files_per_partition=2, rows_per_file=6)
    )
    generated, ours = "tenant_id=acme/", f"tenant_id={BACKFILL_TENANT}/"
    (folder / generated).rename(folder / ours)
    bad = {
        (row["file"].replace(generated, ours, 1), row["row_index"]) for row in manifest["bad_rows"]
    }
    return [
        row
        for path in data_file_paths(folder)
        for index, row in enumerate(pq.read_table(folder / path).to_pylist())
        if (path, index) not in bad
    ]


def cdc_events(snapshot_ids: list[str]) -> list[dict]:
    """Events on both sides of the as-of time, shuffled: before it and at it (they change
    nothing for a record of the snapshot), after it (they fold on top), and a record not in the
    snapshot."""
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
    random.Random(39).shuffle(events)
    return events


# op snapshot is only for the files `backfill` lands: elsewhere it is a bad line
FORGED = event("forged", SNAPSHOT, AS_OF, SNAPSHOT_SEQ, {"a": 1})


def no_op_events(snapshot_ids: list[str], events: list[dict]) -> list[dict]:
    """Lines that change no record (SPEC.md: duplicates and events at or before T change
    nothing; a late event whose every key a later one replaced is absorbed)."""
    return [
        *events[:5],
        event(snapshot_ids[-1], "upsert", AS_OF - timedelta(days=3), 0, {"x": 1}),
        event("new-1", "upsert", AS_OF - timedelta(days=2), 0, {"a": 5}),
    ]


# with the lines that change nothing, one new record
FRESH = event("new-2", "upsert", AS_OF + timedelta(days=1), 0, {"fresh": True})


def write_lines(folder: Path, name: str, messages: list[dict]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("".join(json.dumps(m) + "\n" for m in messages))
