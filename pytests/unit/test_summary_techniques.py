"""The summary's lines on the last run (nodes skipped, marts by technique) and on erasure
requests (profile_lake.summary)."""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow as pa

from profile_lake.summary import _last_run_techniques, erasure_summary


def test_the_last_run_counts_its_skips_and_techniques() -> None:
    early, late = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC)
    rows = [
        ("r1", "profiles", "OK; technique keys: few keys", early),
        ("r2", "profiles", "OK; technique whole: its tables hold 0.1 MB", late),
        ("r2", "profile_identities", "OK; technique whole: its tables hold 0.1 MB", late),
        ("r2", "identity_index", "OK; technique keys: forced by var mart_technique", late),
        ("r2", "records", "skipped: nothing it reads changed since run r1", late),
        ("r2", "tenant_lag", "OK", None),
    ]
    table = pa.Table.from_pylist(
        [
            dict(zip(("run_id", "node_name", "message", "completed_at"), row, strict=True))
            for row in rows
        ]
    )
    assert _last_run_techniques(table) == [
        "  last run: 1 of 5 nodes skipped; marts by technique: keys 1, whole 2"
    ]


def test_no_run_recorded_says_nothing() -> None:
    assert _last_run_techniques(pa.Table.from_pylist([])) == []


def test_the_erasure_line_counts_requests_applied_and_purged() -> None:
    applied = datetime(2026, 1, 1, tzinfo=UTC)
    requests = [
        {
            "identities_erased": 3,
            "records_erased": 2,
            "purged_at": applied,
            "rows_removed": {"landing.records": 4, "stg_records__changes": 4, "ingest_errors": 2},
        },
        {
            "identities_erased": 0,
            "records_erased": 0,
            "purged_at": None,
            "rows_removed": [("stg_entity_names__updates", 1)],
        },
    ]
    assert erasure_summary(requests) == [
        "  erasure requests: 2 applied, 1 purged; erased 3 known identities, 2 records, "
        "5 landed lines"
    ]
    assert erasure_summary([]) == []
