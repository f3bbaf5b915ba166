"""Legacy Parquet datasets migrated in place and through a shadow: real Spark, Delta, Parquet.

The dataset (profile_lake.generator.legacy) has several partitions, a column added in the later
files and a few rows breaking the records contract. Each test migrates its own copy, under its
own migration id and target, in the session's lake.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from profile_lake.delta_reader import read_delta
from profile_lake.generator.legacy import LegacyConfig, generate_legacy
from profile_lake.migration import maintenance
from profile_lake.migration.lineage import batch_commits, parse_commit
from profile_lake.migration.source import data_file_paths, partition_of
from profile_lake.spark import migration as sm

pytestmark = pytest.mark.integration

KEYS = ["tenant_id", "record_id"]
CONTRACT = {"name": "records_snapshot"}
TARGET_SCHEMA = "legacy_tests"


@pytest.fixture(scope="module")
def legacy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("legacy") / "customers"
    config = LegacyConfig(
        out=root, tenants=2, dates=2, files_per_partition=1, rows_per_file=30, drift_from_date=1
    )
    return root, generate_legacy(config)


@pytest.fixture(scope="module")
def lake(spark, lake_home: Path) -> sm.Lake:
    return sm.Lake(spark, lake_home, "migration_tests")


def copy_of(legacy: tuple[Path, dict], tmp_path: Path) -> Path:
    root = tmp_path / "customers"
    shutil.copytree(legacy[0], root)  # copy2: modification times kept
    return root


def hashes(root: Path, everything: bool = False) -> dict[str, str]:
    """sha256 of every data file (or every file, hidden ones included)."""
    paths = (
        sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
        if everything
        else data_file_paths(root)
    )
    return {path: hashlib.sha256((root / path).read_bytes()).hexdigest() for path in paths}


def source_rows(root: Path, manifest: dict) -> set[tuple]:
    """The source's rows less the manifest's bad ones, read by pyarrow (no Spark)."""
    bad = {(row["file"], row["row_index"]) for row in manifest["bad_rows"]}
    found = set()
    for path in data_file_paths(root):
        partition = dict(partition_of(path) or ())
        for index, row in enumerate(pq.read_table(root / path).to_pylist()):
            if (path, index) not in bad:
                found.add(
                    (
                        partition["tenant_id"],
                        partition["snapshot_date"],
                        row["record_id"],
                        row["payload"],
                        row.get("consent"),
                    )
                )
    return found


def table_rows(location: Path | str) -> set[tuple]:
    """The Delta table's rows, read by the deltalake reader."""
    return {
        (
            row["tenant_id"],
            str(row["snapshot_date"]),
            row["record_id"],
            row["payload"],
            row["consent"],
        )
        for row in read_delta(location).to_pylist()
    }


def quarantined_codes(lake: sm.Lake, migration_id: str) -> Counter:
    rows = lake.spark.table(lake.quarantine).where(f"migration_id = '{migration_id}'").collect()
    return Counter((row["source_file"], row["row_index"], row["error_code"]) for row in rows)


def expected_codes(manifest: dict) -> Counter:
    return Counter(
        (row["file"], row["row_index"], code)
        for row in manifest["bad_rows"]
        for code in row["error_codes"]
    )


def trail(lake: sm.Lake, migration_id: str, step: str) -> list[dict]:
    return [
        row.asDict()
        for row in lake.spark.table(lake.trail)
        .where(f"migration_id = '{migration_id}' and step = '{step}'")
        .collect()
    ]


def test_shadow_migration_audit_publish_and_rollback(legacy, lake, tmp_path) -> None:
    root = copy_of(legacy, tmp_path)
    manifest = legacy[1]
    before, before_all = hashes(root), hashes(root, everything=True)
    target = f"{TARGET_SCHEMA}.customers_shadow"
    plan = sm.start_shadow(lake, "shadow_cycle", root, target, KEYS, CONTRACT)
    assert len(plan.batches) == 4  # one per partition
    states = sm.hydrate(lake, plan)
    location = lake.files(plan.migration_id).state().table_location

    # the table is the source less the quarantined rows, read back by the deltalake reader
    assert table_rows(location) == source_rows(root, manifest)
    assert quarantined_codes(lake, plan.migration_id) == expected_codes(manifest)
    # every batch: source rows = migrated + quarantined; and one commit per batch
    hydrated = trail(lake, plan.migration_id, "hydrate")
    assert sorted(row["batch"] for row in hydrated) == list(range(4))
    for row in hydrated:
        assert row["rows_in"] == row["rows_out"] + row["rows_quarantined"]
    assert sum(row["rows_quarantined"] for row in hydrated) == len(manifest["bad_rows"])
    assert len({state.committed_version for state in states.values()}) == 4
    assert sm.audit(lake, plan) == []

    moved = sm.publish(lake, plan)
    assert lake.spark.table(target).count() == len(source_rows(moved, manifest))
    assert not root.exists() and hashes(moved) == before
    # the old files are held by the migration: a write, or another migration, is refused
    with pytest.raises(maintenance.InMaintenance, match="shadow_cycle"):
        maintenance.assert_writable(moved)
    with pytest.raises(maintenance.InMaintenance, match="shadow_cycle"):
        sm.start_shadow(lake, "another", moved, f"{TARGET_SCHEMA}.other", KEYS, CONTRACT)

    sm.rollback(lake, plan)
    assert hashes(root) == before and hashes(root, everything=True) == before_all
    assert sum(pq.read_table(root / path).num_rows for path in before) == manifest["rows"]
    assert not lake.table_exists(target) and not Path(location).exists()
    assert not quarantined_codes(lake, plan.migration_id)
    assert [row["status"] for row in trail(lake, plan.migration_id, "rollback")] == ["ok"]


def test_failed_audit_refuses_publish_and_rollback_before_publish(legacy, lake, tmp_path) -> None:
    root = copy_of(legacy, tmp_path)
    target = f"{TARGET_SCHEMA}.customers_changed"
    plan = sm.start_shadow(lake, "shadow_changed", root, target, KEYS, CONTRACT)
    sm.hydrate(lake, plan)
    changed = plan.batches[1].files[0]
    table = pq.read_table(root / changed)
    pq.write_table(table.slice(0, table.num_rows - 1), root / changed)  # after it was read

    differences = sm.audit(lake, plan)
    assert any(changed in difference for difference in differences), differences
    with pytest.raises(sm.MigrationRefused, match=f"audit failed.*{changed}"):
        sm.publish(lake, plan)
    assert [row["status"] for row in trail(lake, plan.migration_id, "publish")] == ["refused"]
    assert lake.table_exists(sm.shadow_name(target)) and not lake.table_exists(target)
    assert maintenance.holder(root) is None

    after_change = hashes(root, everything=True)
    sm.rollback(lake, plan)
    assert hashes(root, everything=True) == after_change
    assert not lake.table_exists(sm.shadow_name(target))
    assert not Path(plan.source_root, "_delta_log").exists()
    assert not lake.files(plan.migration_id).exists()


def test_in_place_migration_and_rollback(legacy, lake, tmp_path) -> None:
    root = copy_of(legacy, tmp_path)
    manifest = legacy[1]
    before = hashes(root, everything=True)
    target = f"{TARGET_SCHEMA}.customers_in_place"
    assert sm.in_place(lake, "in_place_ok", root, target, KEYS, CONTRACT) == []

    # the bad rows are quarantined and marked deleted (deletion vectors): read back by deltalake
    assert table_rows(root) == source_rows(root, manifest)
    assert quarantined_codes(lake, "in_place_ok") == expected_codes(manifest)
    assert lake.spark.table(target).count() == manifest["rows"] - len(manifest["bad_rows"])
    assert (root / "_delta_log").is_dir()
    assert {path: before[path] for path in data_file_paths(root)} == hashes(root)  # no rewrite
    (audited,) = trail(lake, "in_place_ok", "audit")
    assert audited["status"] == "ok" and audited["rows_in"] == manifest["rows"]

    plan = lake.files("in_place_ok").plan()
    sm.rollback(lake, plan)
    assert not (root / "_delta_log").exists()
    assert hashes(root, everything=True) == before  # nothing added is left, nothing changed
    assert not lake.table_exists(target)


def test_in_place_refuses_a_source_that_changes(legacy, lake, tmp_path) -> None:
    root = copy_of(legacy, tmp_path)
    changed = data_file_paths(root)[2]
    target = f"{TARGET_SCHEMA}.customers_moving"

    def writer_strikes() -> None:
        table = pq.read_table(root / changed)
        pq.write_table(table.slice(1), root / changed)

    with pytest.raises(sm.MigrationRefused, match=f"changed while it ran.*{changed}"):
        sm.in_place(
            lake, "in_place_moving", root, target, KEYS, CONTRACT, after_listing=writer_strikes
        )
    assert not (root / "_delta_log").exists()
    assert not lake.table_exists(target)
    assert maintenance.holder(root) is None
    (refused,) = trail(lake, "in_place_moving", "convert")
    assert refused["status"] == "refused" and changed in refused["message"]


def test_shadow_killed_mid_hydration_resumes_without_writing_a_batch_twice(
    legacy, tmp_path
) -> None:
    """A `profile-lake migrate shadow` process (its own lake: it owns its metastore) is
    SIGKILLed, with the JVM and workers of its process group, after its first batch commit;
    the same command again resumes at the first batch not committed."""
    root = copy_of(legacy, tmp_path)
    home = tmp_path / "lake"
    env = {
        **os.environ,
        "PROFILE_LAKE_HOME": str(home),
        "PROFILE_LAKE_SCHEMA": "killed",
        "PROFILE_LAKE_DRIVER_MEMORY": "1g",
    }
    command = [
        sys.executable, "-m", "profile_lake.cli", "migrate", "shadow", "--id", "killed",
        "--source", str(root), "--target", "legacy.customers", "--key", "tenant_id",
        "--key", "record_id", "--contract", "records_snapshot",
    ]  # fmt: skip
    location = home / "warehouse" / "legacy.db" / "customers"
    running = subprocess.Popen(
        [*command, "--batch-pause-seconds", "2"],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 600
    while running.poll() is None and time.monotonic() < deadline:
        if batch_commits(location, "killed"):
            os.killpg(running.pid, signal.SIGKILL)
            break
        time.sleep(0.05)
    assert running.wait(timeout=60) == -signal.SIGKILL
    before = batch_commits(location, "killed")
    assert 1 <= len(before) < 4

    resumed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"{len(before)} batches already committed" in resumed.stdout
    assert "audit passed" in resumed.stdout
    commits = [
        parse_commit(int(path.stem), path.read_text(), "killed")
        for path in sorted((location / "_delta_log").glob("[0-9]*.json"))
    ]
    batches = Counter(commit.batch for commit in commits if commit is not None)
    assert batches == Counter(range(4))  # every batch once, none twice
    after = batch_commits(location, "killed")
    assert {b: after[b].version for b in before} == {b: c.version for b, c in before.items()}
    assert table_rows(location) == source_rows(root, legacy[1])


def test_in_place_keys_contract_reads_only_the_files_whose_footers_count_nulls(
    legacy, lake, tmp_path
) -> None:
    """The `keys` contract in place: the footers clear every file without a null key, only the
    file with the missing record_id is read, its row quarantined; the audit counts from the log."""
    root = copy_of(legacy, tmp_path)
    manifest = legacy[1]
    missing = [row for row in manifest["bad_rows"] if row["error_codes"] == ["missing_field"]]
    assert len(missing) == 1
    target = f"{TARGET_SCHEMA}.customers_keys"
    assert sm.in_place(lake, "in_place_keys", root, target, KEYS, {"name": "keys"}) == []
    (step,) = trail(lake, "in_place_keys", "quarantine")
    assert step["message"] == f"1 of {len(data_file_paths(root))} files read"
    assert quarantined_codes(lake, "in_place_keys") == Counter(
        {(missing[0]["file"], missing[0]["row_index"], "missing_field"): 1}
    )
    assert lake.spark.table(target).count() == manifest["rows"] - 1
    (audited,) = trail(lake, "in_place_keys", "audit")
    assert audited["rows_out"] == manifest["rows"] - 1 and audited["rows_quarantined"] == 1
    sm.rollback(lake, lake.files("in_place_keys").plan())
    assert not (root / "_delta_log").exists()
