"""A Delta table's history and properties read from its log folder, without Spark
(profile_lake.delta_log); test_delta_reader.py compares them with Spark's on real tables."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from profile_lake.compaction import data_file
from profile_lake.delta_log import (
    ColumnMinimum,
    changed_bytes_since,
    changed_share,
    column_minimum,
    commit_history,
    live_data_files,
    partition_folder_count,
    partition_values_written_since,
    split_table_name,
    table_file_count,
    table_properties,
    table_size_bytes,
)


def write_commit(log: Path, version: int, operation: str, mtime_s: float, **info: object) -> None:
    path = log / f"{version:020d}.json"
    actions = [{"commitInfo": {"operation": operation, "timestamp": 1, **info}}, {"add": {}}]
    path.write_text("\n".join(json.dumps(action) for action in actions) + "\n")
    os.utime(path, (mtime_s, mtime_s))


def test_history_is_newest_first_with_the_commit_files_times(tmp_path: Path) -> None:
    log = tmp_path / "_delta_log"
    log.mkdir()
    write_commit(log, 0, "CREATE TABLE", 1_000.0)
    write_commit(log, 1, "WRITE", 2_000.0)
    write_commit(log, 2, "MERGE", 3_000.5)
    (log / "00000000000000000002.checkpoint.parquet").write_bytes(b"")
    history = commit_history(tmp_path)
    assert [(c.version, c.operation) for c in history] == [
        (2, "MERGE"),
        (1, "WRITE"),
        (0, "CREATE TABLE"),
    ]
    assert history[0].timestamp == datetime.fromtimestamp(3_000.5, UTC)
    assert [c.version for c in commit_history(tmp_path, 2)] == [2, 1]
    assert [c.version for c in commit_history(tmp_path, 0)] == [2]  # at least one, as Spark


def test_times_never_go_back_and_in_commit_timestamps_win(tmp_path: Path) -> None:
    log = tmp_path / "_delta_log"
    log.mkdir()
    write_commit(log, 0, "WRITE", 5_000.0)
    write_commit(log, 1, "WRITE", 4_000.0)  # a clock that went back: one ms after version 0
    write_commit(log, 2, "WRITE", 9_000.0, inCommitTimestamp=7_000_123)
    times = {c.version: c.timestamp for c in commit_history(tmp_path)}
    assert times[1] == datetime.fromtimestamp(5_000.001, UTC)
    assert times[2] == datetime.fromtimestamp(7_000.123, UTC)
    # the limit still sees the version before the oldest it shows
    assert commit_history(tmp_path, 1)[0].timestamp == times[2]
    assert commit_history(tmp_path, 2)[1].timestamp == times[1]


def test_a_folder_without_a_log_has_no_history_and_no_properties(tmp_path: Path) -> None:
    assert commit_history(tmp_path) == []
    assert table_properties(tmp_path) is None


def test_properties_are_the_latest_metadatas_configuration(tmp_path: Path) -> None:
    rows = pa.table({"id": [1, 2]})
    write_deltalake(tmp_path, rows, configuration={"delta.logRetentionDuration": "interval 2 days"})
    assert table_properties(tmp_path) == {"delta.logRetentionDuration": "interval 2 days"}
    DeltaTable(tmp_path).alter.set_table_properties({"delta.appendOnly": "true"})
    assert table_properties(tmp_path) == {
        "delta.logRetentionDuration": "interval 2 days",
        "delta.appendOnly": "true",
    }


def test_table_names_split_into_schema_and_table() -> None:
    assert split_table_name("lake.records") == ("lake", "records")
    assert split_table_name("`lake`.`records`") == ("lake", "records")
    assert split_table_name("spark_catalog.lake.records") == ("lake", "records")
    assert split_table_name("records") is None
    assert split_table_name("other.lake.records") is None


def write_checksum(log: Path, version: int, size: int, configuration: dict[str, str]) -> None:
    checksum = {"tableSizeBytes": size, "numFiles": 2, "metadata": {"configuration": configuration}}
    (log / f"{version:020d}.crc").write_text(json.dumps(checksum))


def test_size_and_properties_come_from_the_latest_checksum(tmp_path: Path) -> None:
    log = tmp_path / "_delta_log"
    log.mkdir()
    write_commit(log, 0, "WRITE", 1_000.0)
    write_commit(log, 1, "MERGE", 2_000.0)
    write_checksum(log, 0, 10, {"a": "old"})
    assert table_size_bytes(tmp_path) is None  # the latest version has no checksum
    assert table_file_count(tmp_path) is None
    write_checksum(log, 1, 1234, {"a": "new"})
    assert table_size_bytes(tmp_path) == 1234
    assert table_properties(tmp_path) == {"a": "new"}
    checksum = json.loads((log / f"{1:020d}.crc").read_text())
    (log / f"{1:020d}.crc").write_text(json.dumps({**checksum, "numFiles": 7}))
    assert table_file_count(tmp_path) == 7


def test_changed_bytes_since_a_version_add_up_its_later_commits_files(tmp_path: Path) -> None:
    log = tmp_path / "_delta_log"
    log.mkdir()
    for version, sizes in enumerate(([100], [20, 30], [5])):
        actions = [{"commitInfo": {"operation": "WRITE"}}]
        actions += [{"add": {"path": f"f{version}-{size}", "size": size}} for size in sizes]
        actions.append({"remove": {"path": "gone", "size": 999}})
        text = "\n".join(json.dumps(action) for action in actions)
        (log / f"{version:020d}.json").write_text(text + "\n")
    assert changed_bytes_since(tmp_path, 0) == 55
    assert changed_bytes_since(tmp_path, 2) == 0
    later = [
        # a compaction adds no changed rows
        [{"commitInfo": {"operation": "OPTIMIZE"}}, {"add": {"size": 55, "dataChange": False}}],
        # a MERGE rewrote 1,000 bytes of files to insert one row and update one of 100
        [
            {
                "commitInfo": {
                    "operation": "MERGE",
                    "operationMetrics": {
                        "numTargetRowsInserted": "1",
                        "numTargetRowsUpdated": "1",
                        "numTargetRowsDeleted": "5",
                        "numTargetRowsCopied": "98",
                    },
                }
            },
            {"add": {"size": 1000}},
        ],
    ]
    later.append(
        # a MERGE with deletion vectors: the file it marked is removed and added again, with
        # its vector; the new file holds the one row it updated
        [
            {
                "commitInfo": {
                    "operation": "MERGE",
                    "operationMetrics": {"numTargetRowsUpdated": "1", "numTargetRowsCopied": "0"},
                }
            },
            {"remove": {"path": "marked", "size": 5000}},
            {"add": {"path": "marked", "size": 5000, "deletionVector": {"cardinality": 1}}},
            {"add": {"path": "new", "size": 7}},
        ]
    )
    for version, actions in enumerate(later, start=3):
        text = "\n".join(json.dumps(action) for action in actions)
        (log / f"{version:020d}.json").write_text(text + "\n")
    assert changed_bytes_since(tmp_path, 2) == 27
    (log / "00000000000000000001.json").unlink()  # cleaned up: not known
    assert changed_bytes_since(tmp_path, 0) is None
    assert changed_bytes_since(tmp_path / "none", 0) is None


def test_the_changed_share_of_a_commit_follows_its_operation_metrics() -> None:
    merge = {"numTargetRowsInserted": "3", "numTargetRowsUpdated": "1", "numTargetRowsCopied": "4"}
    assert changed_share(merge) == 0.5
    assert changed_share({"numUpdatedRows": "0", "numCopiedRows": "9"}) == 0.0  # a DELETE
    assert changed_share({"numUpdatedRows": "2", "numCopiedRows": "2"}) == 0.5  # an UPDATE
    assert changed_share({"numOutputRows": "7"}) == 1.0  # an append
    assert changed_share(None) == 1.0
    # a MERGE that only deleted, with deletion vectors: it wrote no row
    assert changed_share({"numTargetRowsCopied": "0", "numTargetRowsDeleted": "4"}) == 0.0


def stats(records: int, minimum: str | None, nulls: int = 0) -> str:
    found = {"numRecords": records, "nullCount": {"due": nulls}, "minValues": {}}
    if minimum is not None:
        found["minValues"]["due"] = minimum
    return json.dumps(found)


def test_a_columns_minimum_comes_from_the_live_files_statistics(tmp_path: Path) -> None:
    log = tmp_path / "_delta_log"
    log.mkdir()
    write_commit(log, 0, "WRITE", 1_000.0)

    def checksum(*files: dict) -> ColumnMinimum:
        (log / f"{0:020d}.crc").write_text(json.dumps({"allFiles": list(files)}))
        return column_minimum(tmp_path, "due")

    later = {"path": "a", "stats": stats(3, "2026-12-09T10:00:00.000Z")}
    sooner = {"path": "b", "stats": stats(2, "2026-12-03T08:00:00.000+00:00", nulls=1)}
    all_null = {"path": "c", "stats": stats(4, None, nulls=4)}
    # the smallest minimum, compared as moments (the offsets are written two ways)
    assert checksum(later, sooner, all_null) == ColumnMinimum(True, "2026-12-03T08:00:00.000+00:00")
    assert checksum(all_null) == ColumnMinimum(True, None)  # no row will fall due
    assert checksum() == ColumnMinimum(True, None)  # an empty table
    # a file whose statistics do not say: not known
    assert checksum(later, {"path": "d"}) == ColumnMinimum(False)
    assert checksum(later, {"path": "e", "stats": stats(5, None)}) == ColumnMinimum(False)
    # a checksum without the file list (a table of many files), or none at all
    (log / f"{0:020d}.crc").write_text(json.dumps({"numFiles": 60}))
    assert column_minimum(tmp_path, "due") == ColumnMinimum(False)
    assert column_minimum(tmp_path / "none", "due") == ColumnMinimum(False)


def test_the_tenants_written_since_a_version_are_those_of_its_data_files(tmp_path: Path) -> None:
    """Appends, deletes and compactions on a table partitioned by tenant: the partitions each
    changed data in; a compaction (no data change) names none."""
    table = str(tmp_path / "t")

    def rows(*tenants: str) -> pa.Table:
        return pa.table({"tenant_id": list(tenants), "n": list(range(len(tenants)))})

    write_deltalake(table, rows("acme", "globex"), partition_by=["tenant_id"])  # version 0
    write_deltalake(table, rows("globex"), partition_by=["tenant_id"], mode="append")  # 1
    write_deltalake(table, rows("initech"), partition_by=["tenant_id"], mode="append")  # 2
    assert partition_values_written_since(Path(table), 0, "tenant_id") == {"globex", "initech"}
    assert partition_values_written_since(Path(table), 1, "tenant_id") == {"initech"}
    assert partition_values_written_since(Path(table), 2, "tenant_id") == frozenset()
    DeltaTable(table).optimize.compact()  # 3: globex's two files in one, no row changed
    assert partition_values_written_since(Path(table), 2, "tenant_id") == frozenset()
    DeltaTable(table).delete("tenant_id = 'acme'")  # 4
    assert partition_values_written_since(Path(table), 2, "tenant_id") == {"acme"}
    assert partition_folder_count(Path(table), "tenant_id") == 3  # acme's folder stays


def test_the_tenants_written_are_unknown_without_the_partition_or_the_log(tmp_path: Path) -> None:
    plain = str(tmp_path / "plain")
    write_deltalake(plain, pa.table({"tenant_id": ["acme"], "n": [0]}))
    write_deltalake(plain, pa.table({"tenant_id": ["globex"], "n": [1]}), mode="append")
    assert partition_values_written_since(Path(plain), 0, "tenant_id") is None
    assert partition_folder_count(Path(plain), "tenant_id") is None
    partitioned = tmp_path / "partitioned"
    for tenant in ("acme", "globex", "initech"):
        write_deltalake(
            str(partitioned),
            pa.table({"tenant_id": [tenant], "n": [0]}),
            partition_by=["tenant_id"],
            mode="append",
        )
    (partitioned / "_delta_log" / f"{1:020d}.json").unlink()  # log clean-up
    assert partition_values_written_since(partitioned, 0, "tenant_id") is None
    assert partition_values_written_since(partitioned, 1, "tenant_id") == {"initech"}
    assert partition_values_written_since(tmp_path / "none", 0, "tenant_id") is None


def test_the_live_data_files_are_the_logs_with_their_partitions(tmp_path: Path) -> None:
    """Appends and a compaction by delta-rs: the files each partition holds now."""
    table = str(tmp_path / "t")
    rows = pa.table({"tenant_id": ["acme", "globex", None], "n": [0, 1, 2]})
    write_deltalake(table, rows, partition_by=["tenant_id"])
    write_deltalake(table, rows, partition_by=["tenant_id"], mode="append")
    files = live_data_files(Path(table))
    assert files is not None
    assert sorted(str(file.partition) for file in files) == sorted(
        str((("tenant_id", tenant),)) for tenant in ("acme", "globex", None) * 2
    )
    assert all(file.size > 0 for file in files)
    DeltaTable(table).optimize.compact()
    assert len(live_data_files(Path(table)) or []) == 3
    # Delta's checksum of the latest version, where it lists the files, is read instead
    latest = DeltaTable(table).version()
    listed = [{"path": "a", "partitionValues": {"tenant_id": "acme"}, "size": 7}]
    checksum = Path(table) / "_delta_log" / f"{latest:020d}.crc"
    checksum.write_text(json.dumps({"numFiles": 1, "allFiles": listed}))
    assert live_data_files(Path(table)) == [data_file({"tenant_id": "acme"}, 7)]
    plain = str(tmp_path / "plain")
    write_deltalake(plain, rows)
    assert [file.partition for file in live_data_files(Path(plain)) or []] == [()]
    assert live_data_files(tmp_path / "none") is None
