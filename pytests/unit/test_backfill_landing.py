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
    with pytest.raises(ValueError, match="'yesterday' is not an ISO-8601 time: write"):
        parse_as_of("yesterday")


def test_snapshot_without_its_columns_is_refused(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"record_id": ["a"]}), tmp_path / "x.parquet")
    with pytest.raises(ValueError, match="lacks the columns"):
        backfill(tmp_path / "x.parquet", tmp_path / "landing", "acme", "2024-06-01T00:00:00Z")


AS_OF = "2024-06-01T00:00:00Z"


def write_snapshot(root: Path, folders: dict[str, list[str | None]]) -> None:
    """One Parquet file per folder (relative to `root`), holding the given record ids."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for folder, record_ids in folders.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        rows = len(record_ids)
        table = pa.table(
            {
                "record_id": pa.array(record_ids, pa.string()),
                "record_type": ["profile"] * rows,
                "primary_id": [f"email:{record_id}@example.test" for record_id in record_ids],
                "payload": ['{"a":1}'] * rows,
            }
        )
        pq.write_table(table, root / folder / "part-00000.parquet")


def run_cli(*argv: str | Path) -> int:
    from profile_lake.cli import main

    return main([str(arg) for arg in argv])


def refused(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> str:
    """The one-line error of a backfill that must be refused."""
    assert run_cli("backfill", *argv) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("error: ")
    return line


def test_missing_snapshot_is_refused_with_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    landing = tmp_path / "landing"
    args = ["--tenant", "acme", "--as-of", AS_OF, "--landing", landing]
    line = refused(capsys, "--snapshot", tmp_path / "nope", *args)
    assert f"snapshot {tmp_path / 'nope'} does not exist: pass --snapshot" in line
    assert not landing.exists()  # no empty records/ folder left behind


def test_tenant_of_digits_reads_its_partition_folder_as_a_string(tmp_path: Path) -> None:
    """Folders whose values are all digits would be inferred as integers (0001 = 1)."""
    snapshot = tmp_path / "snapshot"
    write_snapshot(
        snapshot,
        {
            "tenant_id=0001/dt=20240101": ["a", "b"],
            "tenant_id=1/dt=20240101": ["c"],
        },
    )
    report = backfill(snapshot, tmp_path / "landing", "0001", AS_OF)
    lines = [json.loads(line) for p in report.files for line in p.read_text().splitlines()]
    assert sorted((m["tenant_id"], m["record_id"]) for m in lines) == [("0001", "a"), ("0001", "b")]
    assert backfill(snapshot, tmp_path / "other", "1", AS_OF).rows == 1


def test_tenant_without_rows_is_refused_naming_the_tenants_held(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snapshot = tmp_path / "snapshot"
    write_snapshot(snapshot, {"tenant_id=acme": ["a"], "tenant_id=0002": ["b"]})
    landing = tmp_path / "landing"
    args = ["--tenant", "globex", "--as-of", AS_OF, "--landing", landing]
    line = refused(capsys, "--snapshot", snapshot, *args)
    assert "holds no rows of tenant globex; it holds tenant(s) 0002, acme: pass one" in line
    assert not landing.exists()


def test_record_under_two_rows_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A snapshot is one row per record, its state at the as-of time (SPEC.md section 6): a
    dataset of several snapshot dates holding a record under each is refused, not landed as
    rows that tie; a row without record_id is for the ingest to quarantine, not a repeat."""
    snapshot = tmp_path / "snapshot"
    write_snapshot(
        snapshot,
        {
            "tenant_id=acme/snapshot_date=2024-01-01": ["r1", "r2", None],
            "tenant_id=acme/snapshot_date=2024-01-02": ["r1", "r3", None],
            "tenant_id=globex/snapshot_date=2024-01-02": ["r2"],
        },
    )
    landing = tmp_path / "landing"
    args = ["--tenant", "acme", "--as-of", AS_OF, "--landing", landing]
    line = refused(capsys, "--snapshot", snapshot, *args)
    first = snapshot / "tenant_id=acme/snapshot_date=2024-01-01"
    assert "holds 1 record(s) of tenant acme under two rows or more: r1 (r1 is in " in line
    assert "snapshot_date=2024-01-01/part-00000.parquet, tenant_id=acme/snapshot_date" in line
    assert f"(e.g. --snapshot {first})" in line and "Nothing was landed" in line
    assert not landing.exists()
    # one date's folder is one snapshot
    assert run_cli("backfill", "--snapshot", first, *args) == 0
    assert "landed 3 snapshot rows in 1 files" in capsys.readouterr().out


def test_a_backfill_failing_midway_lands_nothing(tmp_path: Path) -> None:
    from profile_lake.migration.backfill import land_lines

    def lines():
        yield from ["{}", "{}", "{}"]
        raise OSError("disk gone")

    folder = tmp_path / "landing" / "records"
    with pytest.raises(OSError, match="disk gone"):
        land_lines(lines(), folder, "backfill-acme-x", lines_per_file=1)
    assert not (tmp_path / "landing").exists()
    (tmp_path / "landing" / "records").mkdir(parents=True)
    with pytest.raises(OSError, match="disk gone"):
        land_lines(lines(), folder, "backfill-acme-x", lines_per_file=1)
    assert list(folder.iterdir()) == []  # its folder was there before: kept, empty
