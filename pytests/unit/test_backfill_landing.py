"""`profile-lake backfill`: a legacy snapshot becomes landing lines of op snapshot at T."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profile_lake.generator.legacy import LegacyConfig, generate_legacy
from profile_lake.ingest.lines import stream_of
from profile_lake.jsonmerge import SNAPSHOT_SEQ
from profile_lake.migration.backfill import backfill, parse_as_of


def test_snapshot_lands_as_snapshot_lines_once(tmp_path: Path) -> None:
    snapshot = tmp_path / "legacy"
    manifest = generate_legacy(LegacyConfig(out=snapshot, tenants=2, dates=1, rows_per_file=6))
    landing = tmp_path / "landing"
    report = backfill(snapshot, landing, "acme", "2024-06-01T00:00:00+02:00", lines_per_file=5)
    assert report.rows == 12  # acme's rows only: 1 date x 2 files x 6
    assert [p.name for p in report.files] == [
        f"backfill-acme-20240531T220000000000Z-part-{n:05d}.jsonl" for n in range(3)
    ]
    assert all(stream_of(f"records/{p.name}") == "records" for p in report.files)
    assert not list((landing / "records").glob(".*"))  # no hidden temporary left
    lines = [json.loads(line) for p in report.files for line in p.read_text().splitlines()]
    assert {(m["tenant_id"], m["op"], m["event_ts"], m["seq"]) for m in lines} == {
        ("acme", "snapshot", "2024-05-31T22:00:00Z", SNAPSHOT_SEQ)
    }
    spoiled = [
        m
        for m in lines
        if m["record_id"] is None
        or not isinstance(m["payload"], dict)
        or not m["primary_id"].startswith("email:")
        or m["record_type"] not in ("profile", "event")
    ]
    assert len(spoiled) == len([b for b in manifest["bad_rows"] if "tenant_id=acme" in b["file"]])
    with pytest.raises(ValueError, match="already landed"):
        backfill(snapshot, landing, "acme", "2024-05-31T22:00:00Z")


def test_as_of_needs_a_zone() -> None:
    assert parse_as_of("2024-06-01T00:00:00Z").isoformat() == "2024-06-01T00:00:00+00:00"
    with pytest.raises(ValueError, match="needs a zone"):
        parse_as_of("2024-06-01T00:00:00")


def test_snapshot_without_its_columns_is_refused(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"record_id": ["a"]}), tmp_path / "x.parquet")
    with pytest.raises(ValueError, match="lacks the columns"):
        backfill(tmp_path / "x.parquet", tmp_path / "landing", "acme", "2024-06-01T00:00:00Z")
