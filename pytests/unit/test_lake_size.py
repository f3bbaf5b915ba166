"""How much data a lake holds, from its Delta logs' checksum files, or from its landing folder
before its first build (profile_lake.lake_size), and the run's code generation and task counts
chosen from it (the adapter's credentials)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dbt.adapters.profile_lake_spark.connections import run_session_sizing
from dbt_common.exceptions import DbtRuntimeError

from profile_lake.lake_size import folder_bytes, lake_data_bytes, largest_table_bytes
from profile_lake.techniques import (
    CODEGEN_MAX_INTERPRETED_BYTES,
    ONE_TASK_MAX_BYTES,
    QUICK_JIT_OPTIONS,
)


def delta_table(path: Path, size: int | None) -> None:
    """A table folder whose latest commit has a checksum of `size` bytes (none when None)."""
    log = path / "_delta_log"
    log.mkdir(parents=True)
    (log / f"{0:020d}.json").write_text('{"commitInfo": {"operation": "WRITE"}}\n')
    if size is not None:
        (log / f"{0:020d}.crc").write_text(json.dumps({"tableSizeBytes": size}))


def test_the_largest_table_of_every_schema_counts(tmp_path: Path) -> None:
    assert largest_table_bytes(tmp_path) == 0
    delta_table(tmp_path / "a.db" / "small", 10)
    delta_table(tmp_path / "b.db" / "big", 5_000)
    delta_table(tmp_path / "top", 300)
    assert largest_table_bytes(tmp_path) == 5_000
    delta_table(tmp_path / "a.db" / "unknown", None)
    assert largest_table_bytes(tmp_path) is None


def test_a_lake_without_tables_counts_its_landing_files(tmp_path: Path) -> None:
    warehouse, landing = tmp_path / "warehouse", tmp_path / "landing"
    (landing / "records").mkdir(parents=True)
    (landing / "records" / "a.jsonl").write_bytes(b"x" * 700)
    (landing / "b.jsonl").write_bytes(b"x" * 50)
    assert folder_bytes(landing) == 750
    assert folder_bytes(tmp_path / "missing") == 0
    assert lake_data_bytes(str(warehouse), landing) == 750
    delta_table(warehouse / "s.db" / "t", 20)
    assert lake_data_bytes(f"file:{warehouse}", landing) == 20
    assert lake_data_bytes("s3a://bucket/warehouse", landing) is None
    # a migration's dataset counts beside the tables
    (tmp_path / "dataset").mkdir()
    (tmp_path / "dataset" / "part.parquet").write_bytes(b"x" * 90)
    assert lake_data_bytes(str(warehouse), landing, tmp_path / "dataset") == 90


def test_the_run_sizes_its_session_by_the_lake(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a small lake: no code generation, a driver JVM with the quick compiler alone, one
    task per shuffle, per scan and per rebuild of a table's state, no adaptive re-planning; past
    the threshold: compiled plans, both compilers and a task per core; a number set stands."""
    monkeypatch.setenv("PROFILE_LAKE_LANDING", str(tmp_path / "landing"))
    warehouse = tmp_path / "warehouse"
    delta_table(warehouse / "s.db" / "t", 1_000)
    params = {
        "spark.sql.warehouse.dir": str(warehouse),
        "spark.sql.codegen.wholeStage": "auto",
        "spark.sql.shuffle.partitions": "auto",
        "spark.databricks.delta.snapshotPartitions": "auto",
    }
    assert run_session_sizing(params) == {
        "spark.sql.codegen.wholeStage": "false",
        "spark.sql.codegen.factoryMode": "NO_CODEGEN",
        "spark.sql.shuffle.partitions": "1",
        "spark.databricks.delta.snapshotPartitions": "1",
        "spark.sql.adaptive.enabled": "false",
        "spark.sql.files.minPartitionNum": "1",
        "spark.driver.extraJavaOptions": " ".join(QUICK_JIT_OPTIONS),
    }
    delta_table(
        warehouse / "s.db" / "big", max(CODEGEN_MAX_INTERPRETED_BYTES, ONE_TASK_MAX_BYTES) + 1
    )
    large = run_session_sizing(params)
    assert large["spark.sql.codegen.wholeStage"] == "true"
    assert large["spark.sql.shuffle.partitions"] == "4"
    assert large["spark.databricks.delta.snapshotPartitions"] == "2"
    assert "spark.sql.adaptive.enabled" not in large  # the profile's (on)
    assert large["spark.driver.extraJavaOptions"] == ""  # both compilers, the default collector
    fixed = {**params, "spark.sql.codegen.wholeStage": "false", "spark.sql.shuffle.partitions": "3"}
    assert run_session_sizing(fixed)["spark.sql.codegen.wholeStage"] == "false"
    assert run_session_sizing(fixed)["spark.sql.shuffle.partitions"] == "3"
    with pytest.raises(DbtRuntimeError, match="PROFILE_LAKE_CODEGEN is 'fast'"):
        run_session_sizing({**params, "spark.sql.codegen.wholeStage": "fast"})
    with pytest.raises(DbtRuntimeError, match="PROFILE_LAKE_SNAPSHOT_PARTITIONS is '0'"):
        run_session_sizing({**params, "spark.databricks.delta.snapshotPartitions": "0"})
