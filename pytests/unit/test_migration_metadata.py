"""The metadata an in-place migration works from instead of reading rows: footers read in
parallel with their null counts, the files a contract must read, a Delta log replayed for its
files, deletion vectors and schema; and the checksums a shadow's hydration keeps."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from profile_lake.migration.contract import contract_checks, null_checked_columns
from profile_lake.migration.convert import conversion_commit, delta_type
from profile_lake.migration.lineage import log_snapshot, spark_type_of
from profile_lake.migration.plan import files_to_scan, make_plan, plan_batches, preflight
from profile_lake.migration.source import SourceFile, list_source, partition_of
from profile_lake.migration.state import MigrationFiles
from profile_lake.migration.trail import TRAIL_COLUMNS, Step, trail_values


def write(root: Path, path: str, columns: dict, statistics: bool = True) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns), root / path, write_statistics=statistics, row_group_size=2)


def test_footers_read_in_parallel_carry_null_counts(tmp_path: Path) -> None:
    write(tmp_path, "t=a/one.parquet", {"k": ["x", None, "y"], "tags": [["a"], None, []]})
    write(tmp_path, "t=a/two.parquet", {"k": ["x", "y", "z"]})
    write(tmp_path, "t=b/three.parquet", {"k": ["x", "y"]}, statistics=False)
    serial, parallel = list_source(tmp_path, readers=1), list_source(tmp_path, readers=4)
    assert serial == parallel  # same facts, same order
    nulls = {source.path: dict(source.null_counts) for source in parallel.files}
    # summed over row groups (two of them in one.parquet); a list's leaf is not a column
    assert nulls == {
        "t=a/one.parquet": {"k": 1},
        "t=a/two.parquet": {"k": 0},
        "t=b/three.parquet": {"k": None},  # no statistics written: unknown
    }


def source(path: str, rows: int = 5, **nulls: int | None) -> SourceFile:
    columns = tuple((name, "string") for name in nulls)
    return SourceFile(path, 1, 1, rows, partition_of(path) or (), columns, tuple(nulls.items()))


def test_files_to_scan_reads_only_what_the_footers_cannot_clear() -> None:
    files = [
        source("t=a/clean.parquet", k=0),
        source("t=a/nulls.parquet", k=2),
        source("t=a/unknown.parquet", k=None),
        source("t=a/without_k.parquet", other=0),  # the key column absent: null in every row
        source("t=__HIVE_DEFAULT_PARTITION__/null_partition.parquet", k=0),
        source("t=a/empty.parquet", rows=0, k=None),  # no row to judge
    ]
    assert files_to_scan(files, ("t", "k")) == [
        "t=a/nulls.parquet",
        "t=a/unknown.parquet",
        "t=a/without_k.parquet",
        "t=__HIVE_DEFAULT_PARTITION__/null_partition.parquet",
    ]
    assert files_to_scan(files[:1], ("t", "k")) == []
    # a rule on values: every file with rows is read
    assert files_to_scan(files, None) == [f.path for f in files if f.rows]


def test_only_null_rules_let_the_footers_decide() -> None:
    keys = contract_checks({"name": "keys"}, ["t", "k", "k"], [])
    assert null_checked_columns(keys) == ("t", "k")
    snapshot = contract_checks({"name": "records_snapshot"}, ["t", "record_id"], ["t"])
    assert null_checked_columns(snapshot) is None
    assert null_checked_columns([]) == ()


def commit(log: Path, version: int, *actions: dict) -> None:
    lines = "\n".join(json.dumps(action) for action in actions)
    (log / f"{version:020d}.json").write_text(lines + "\n")


def test_log_snapshot_replays_files_deletion_vectors_and_schema(tmp_path: Path) -> None:
    log = tmp_path / "_delta_log"
    log.mkdir()
    schema = {
        "type": "struct",
        "fields": [
            {"name": "k", "type": "string"},
            {"name": "n", "type": "long"},
            {"name": "tags", "type": {"type": "array", "elementType": "string"}},
            {"name": "d", "type": "date"},
        ],
    }
    commit(
        log,
        0,
        {"metaData": {"schemaString": json.dumps(schema)}},
        {"add": {"path": "d=2024-01-01/a.parquet"}},
        {"add": {"path": "d=2024-01-01/b%20c.parquet"}},
        {"commitInfo": {"operation": "CONVERT"}},
    )
    commit(
        log,
        1,
        {"remove": {"path": "d=2024-01-01/a.parquet"}},
        {"add": {"path": "d=2024-01-01/a.parquet", "deletionVector": {"cardinality": 3}}},
    )
    snapshot = log_snapshot(tmp_path)
    assert snapshot is not None
    assert snapshot.files == {"d=2024-01-01/a.parquet": 3, "d=2024-01-01/b c.parquet": 0}
    assert snapshot.deleted_rows == 3
    assert snapshot.columns == (
        ("k", "string"),
        ("n", "bigint"),
        ("tags", "array<string>"),
        ("d", "date"),
    )
    (log / "_last_checkpoint").write_text("{}")
    assert log_snapshot(tmp_path) is None  # a checkpoint: Spark reads it
    assert log_snapshot(tmp_path / "nowhere") is None


def test_spark_types_of_delta_schema_types() -> None:
    assert spark_type_of("integer") == "int" and spark_type_of("decimal(10, 2)") == "decimal(10,2)"
    assert spark_type_of({"type": "array", "elementType": "long"}) == "array<bigint>"
    assert spark_type_of({"type": "struct", "fields": []}) is None  # not replayed: ask Spark
    assert spark_type_of({"type": "map", "keyType": "string", "valueType": "string"}) is None


def test_hydration_checksums_are_kept_per_batch(tmp_path: Path) -> None:
    files = MigrationFiles(tmp_path, "m1")
    assert files.checksums() == {}
    files.save_checksum(2, 10, -5)
    files.save_checksum(0, 4, 2**62)
    files.save_checksum(2, 11, 7)  # a batch measured again replaces its measure
    assert MigrationFiles(tmp_path, "m1").checksums() == {0: (4, 2**62), 2: (11, 7)}


def test_conversion_commit_is_convert_to_deltas_from_the_footers(tmp_path: Path) -> None:
    write(tmp_path, "t=a/d=2024-01-01/one.parquet", {"k": ["x", "y"], "tags": [["a"], []]})
    write(tmp_path, "t=a b/d=2024-01-02/two.parquet", {"k": ["z"], "tags": [["b"]]})
    listing = list_source(tmp_path)
    plan = make_plan(
        "m1", "in_place", str(tmp_path), "db.t", listing,
        preflight(listing, {"d": "date"}), ["k"],
    )  # fmt: skip
    actions = [json.loads(line) for line in conversion_commit(plan, 1_000, "id-1").splitlines()]
    assert actions[0]["commitInfo"]["operation"] == "CONVERT"
    assert actions[1] == {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}
    meta = actions[2]["metaData"]
    assert meta["id"] == "id-1" and meta["partitionColumns"] == ["t", "d"]
    fields = {f["name"]: f["type"] for f in json.loads(meta["schemaString"])["fields"]}
    assert fields == {
        "k": "string",
        "tags": {"type": "array", "elementType": "string", "containsNull": True},
        "t": "string",
        "d": "date",
    }
    adds = [action["add"] for action in actions[3:]]
    assert [add["path"] for add in adds] == [
        "t=a%20b/d=2024-01-02/two.parquet",  # URI-encoded, as Delta reads it
        "t=a/d=2024-01-01/one.parquet",
    ]
    assert adds[0]["partitionValues"] == {"t": "a b", "d": "2024-01-02"}
    assert [json.loads(add["stats"]) for add in adds] == [{"numRecords": 1}, {"numRecords": 2}]
    assert adds[1]["size"] == (tmp_path / "t=a/d=2024-01-01/one.parquet").stat().st_size
    # replayed, the commit gives back the files (decoded) and the plan's schema
    (tmp_path / "_delta_log").mkdir()
    (tmp_path / "_delta_log" / f"{0:020d}.json").write_text(conversion_commit(plan, 1_000))
    snapshot = log_snapshot(tmp_path)
    assert snapshot is not None and set(snapshot.files) == set(plan.files)
    assert dict(snapshot.columns or ()) == dict((*plan.columns, *plan.partition_columns))
    assert delta_type("array<bigint>") == {
        "type": "array",
        "elementType": "long",
        "containsNull": True,
    }


def test_small_partitions_packed_into_batches_by_size() -> None:
    def sized(path: str, size: int) -> SourceFile:
        return SourceFile(path, size, 1, 10, partition_of(path) or (), (("k", "string"),))

    files = [sized(f"d={day}/part-{n}.parquet", 40) for day in (1, 2, 3) for n in (0, 1)]
    assert len(plan_batches(files)) == 3  # by default, one batch per partition
    packed = plan_batches(files, min_batch_bytes=100)  # d=1 (80 bytes) takes d=2 in
    assert [(b.index, b.label, len(b.files), b.rows) for b in packed] == [
        (0, "d=1 .. d=2", 4, 40),
        (1, "d=3", 2, 20),
    ]
    assert len(plan_batches(files, max_files_per_batch=3, min_batch_bytes=10**9)) == 3


def test_trail_rows_as_sql_values() -> None:
    at = datetime(2026, 1, 2, 3, 4, 5, 678)
    step = Step("m1", "/data/it's", "in_place", "audit", at, at, "ok", "a \\ b", rows_in=7)
    values = trail_values(step)
    assert values.startswith("('m1', '/data/it\\'s', 'in_place', 'audit', null, null, 7, null")
    assert "timestamp'2026-01-02 03:04:05.000678'" in values
    assert values.endswith("'ok', 'a \\\\ b')")
    assert values.count(", ") == len(TRAIL_COLUMNS) - 1
