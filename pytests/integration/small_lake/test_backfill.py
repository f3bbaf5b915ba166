"""A tenant backfilled from a legacy snapshot (SPEC.md section 6), with CDC events on both
sides of its as-of time arriving shuffled over two runs (the snapshot itself in the second):
`records` equals the in-order fold of the snapshot and the events, lines that change nothing
change nothing, and the snapshot's bad rows are quarantined in ingest_errors like bad lines.

The tenant is hooli, on the small lake (conftest.py): half of its events land before the lake's
first build, the snapshot and the other half before its third, and lines that change no record
before its fourth run, a selection of the records pipeline. The tests read the tenant's rows as
the third and the fourth run left them."""

from __future__ import annotations

import json
from datetime import UTC

import pytest

from profile_lake.jsonmerge import SNAPSHOT, SNAPSHOT_SEQ, reference_fold, version_of
from pytests.integration.small_lake.landings import AS_OF

pytestmark = pytest.mark.integration


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


def records_of(records: list[dict]) -> dict[str, tuple]:
    """The tenant's records, with the batch that last changed each."""
    return {
        row["record_id"]: (row["payload"], row["event_ts"], row["ingest_batch_id"])
        for row in records
    }


def test_lines_that_change_no_record_change_no_row_and_notify_nothing(small_lake) -> None:
    """The fourth run: duplicates, events before the as-of time and a late event whose every
    key a later one replaced (SPEC.md) leave records as they were; one new record is the one
    notification."""
    before, after = small_lake.backfilled_before_no_ops, small_lake.backfilled_after_no_ops
    assert len(after.notifications) == len(before.notifications) + 1
    # order by records_version desc, record_id: the first
    newest = sorted(
        after.notifications, key=lambda row: (-row["records_version"], row["record_id"])
    )[0]
    assert (newest["record_id"], newest["change_type"]) == ("new-2", "insert")
    after_no_ops = records_of(after.records)
    assert {k: v for k, v in after_no_ops.items() if k != "new-2"} == records_of(before.records)


def test_records_are_the_in_order_fold_of_the_snapshot_and_the_events(small_lake) -> None:
    found = {row["record_id"]: row for row in small_lake.backfilled_after_no_ops.records}
    snapshot_rows = small_lake.snapshot_rows
    expected = expected_records(snapshot_rows, small_lake.backfill_events)
    assert {k: json.loads(v["payload"]) for k, v in found.items()} == expected
    # a record whose last applied event is its snapshot row shows the as-of time
    untouched = snapshot_rows[-1]["record_id"]
    assert found[untouched]["event_ts"].replace(tzinfo=UTC) == AS_OF
    assert expected[snapshot_rows[0]["record_id"]]["tier"] == "new"  # after T: applied
    assert "stale" not in expected[snapshot_rows[0]["record_id"]]  # before T: changes nothing


def test_bad_snapshot_rows_and_a_forged_snapshot_line_are_quarantined(small_lake) -> None:
    """Op snapshot is for the files `backfill` lands only: a CDC file's line with it is bad."""
    backfilled = small_lake.backfilled_after_no_ops
    errors = [(row["source_file"], row["error_code"]) for row in backfilled.errors]
    assert sorted(code for file, code in errors if file.startswith("records/backfill-")) == sorted(
        ["missing_field", "invalid_identity", "wrong_type", "invalid_record_type"]
    )
    (forged_error,) = [code for file, code in errors if file == "records/cdc-1.jsonl"]
    assert forged_error == "invalid_op"
    assert "forged" not in {row["record_id"] for row in backfilled.records}
