"""Migration logic without Spark: footers, preflight, batches, resume, audit, lineage, trail."""

from __future__ import annotations

import io
import json
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from profile_lake.generator.legacy import LegacyConfig, generate_legacy
from profile_lake.migration import maintenance
from profile_lake.migration.contract import contract_checks, problems_sql
from profile_lake.migration.lineage import batch_commits, parse_commit
from profile_lake.migration.plan import (
    AuditFacts,
    BatchState,
    Plan,
    audit_differences,
    changed_files,
    make_plan,
    partition_columns,
    plan_batches,
    preflight,
    resume_actions,
    spark_type,
    unify_schema,
)
from profile_lake.migration.progress import Progress, progress_line
from profile_lake.migration.source import SourceFile, fingerprints, list_source, partition_of
from profile_lake.migration.state import MigrationFiles, MigrationState, check_migration_id
from profile_lake.migration.trail import Step, standing


def source(path: str, rows: int = 10, **columns: str) -> SourceFile:
    partition = partition_of(path) or ()
    return SourceFile(path, 100, 1, rows, partition, tuple(columns.items()) or (("a", "int64"),))


def test_partition_of_decodes_hive_folders() -> None:
    assert partition_of("t=acme/dt=2024-01-05/x.parquet") == (("t", "acme"), ("dt", "2024-01-05"))
    assert partition_of("t=a%2Fb/x.parquet") == (("t", "a/b"),)
    assert partition_of("t=__HIVE_DEFAULT_PARTITION__/x.parquet") == (("t", None),)
    assert partition_of("x.parquet") == ()
    assert partition_of("loose/x.parquet") is None


def test_spark_types() -> None:
    assert spark_type("int64") == "bigint"
    assert spark_type("timestamp[us, tz=UTC]") == "timestamp"
    assert spark_type("list<element: string>") == "array<string>"
    assert spark_type("list<element: string not null>") == "array<string>"  # as Spark writes
    assert spark_type("decimal128(10, 2)") == "decimal(10,2)"
    assert spark_type("dictionary<values=string, indices=int32>") is None


def test_unify_schema_adds_drifted_columns_widens_ints_and_reports_conflicts() -> None:
    report = unify_schema(
        [
            source("d=1/a.parquet", a="int32", b="string"),
            source("d=2/b.parquet", a="int64", b="string", c="double"),
        ]
    )
    assert report.columns == (("a", "bigint"), ("b", "string"), ("c", "double"))
    assert report.added == (("c", "d=2/b.parquet"),)
    assert report.problems == ()
    conflict = unify_schema([source("a.parquet", a="int64"), source("b.parquet", a="string")])
    assert conflict.problems == ("column a is bigint in a.parquet but string in b.parquet",)


def test_partition_columns_inferred_declared_and_checked() -> None:
    files = [source("t=acme/dt=2024-01-05/a.parquet"), source("t=acme/dt=2024-02-30/b.parquet")]
    typed, problems = partition_columns(files, {})
    assert typed == (("t", "string"), ("dt", "string"))  # 2024-02-30 is no date
    typed, problems = partition_columns(files, {"dt": "date"})
    assert typed == (("t", "string"), ("dt", "date"))
    assert problems == [
        "t=acme/dt=2024-02-30/b.parquet: partition value dt=2024-02-30 is not a date"
    ]
    mixed = [source("t=acme/a.parquet"), source("u=1/b.parquet")]
    assert "differ" in partition_columns(mixed, {})[1][0]
    assert partition_columns([source("n=007/a.parquet")], {})[0] == (("n", "bigint"),)


def test_preflight_reports_every_problem(tmp_path: Path) -> None:
    good = pa.table({"record_id": ["a", "b"], "n": pa.array([1, 2], pa.int32())})
    (tmp_path / "t=acme").mkdir()
    pq.write_table(good, tmp_path / "t=acme" / "a.parquet")
    pq.write_table(pa.table({"record_id": [1]}), tmp_path / "t=acme" / "b.parquet")
    (tmp_path / "t=acme" / "c.parquet").write_bytes(b"not parquet at all")
    (tmp_path / "loose").mkdir()
    pq.write_table(good, tmp_path / "loose" / "d.parquet")
    (tmp_path / "_SUCCESS").write_text("")
    (tmp_path / "deletion_vector_0a1b.bin").write_bytes(b"\0")
    listing = list_source(tmp_path)
    report = preflight(listing, key_columns=["record_id", "missing"], target_exists="db.t")
    assert not report.ok
    text = report.describe()
    assert "t=acme/c.parquet: footer unreadable" in text
    assert "loose/d.parquet: folder is not a name=value partition" in text
    assert "column record_id is string in t=acme/a.parquet but bigint in t=acme/b.parquet" in text
    assert "key column missing is in no file" in text
    assert "target table db.t already exists" in text
    assert report.files == 2 and report.rows == 3


def test_a_missing_source_folder_is_said_to_be_missing(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"folder .*/nope does not exist: pass the folder"):
        list_source(tmp_path / "nope")
    (tmp_path / "a.parquet").write_bytes(b"")
    with pytest.raises(NotADirectoryError, match=r"a.parquet is a file, not a dataset's folder"):
        list_source(tmp_path / "a.parquet")


@pytest.mark.parametrize("action", ["preflight", "in-place", "shadow"])
def test_migrate_refuses_a_missing_source_before_spark_starts(
    action: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    from pyspark.sql import SparkSession

    from profile_lake.cli import main

    def no_spark(*_: object) -> None:
        raise AssertionError("Spark started")

    monkeypatch.setattr(SparkSession.Builder, "getOrCreate", no_spark)
    monkeypatch.setenv("PROFILE_LAKE_HOME", str(tmp_path / "home"))
    missing = tmp_path / "nope"
    argv = ["migrate", action, "--id", "m1", "--source", str(missing), "--target", "legacy.t"]
    assert main([*argv, "--key", "record_id"]) == 1
    captured = capsys.readouterr()
    assert captured.err == (
        f"error: the dataset's folder {missing} does not exist: pass the folder holding its "
        "Parquet files (its name=value partition folders)\n"
    )
    assert not (tmp_path / "home").exists()  # no plan, no trail: nothing written


def test_preflight_of_the_legacy_dataset(tmp_path: Path) -> None:
    manifest = generate_legacy(LegacyConfig(out=tmp_path, rows_per_file=5))
    report = preflight(list_source(tmp_path), key_columns=["tenant_id", "record_id"])
    assert report.ok, report.describe()
    assert report.rows == manifest["rows"] == 60
    assert report.partition_columns == (("tenant_id", "string"), ("snapshot_date", "date"))
    assert report.schema.added[0][0] == "consent"
    assert "schema drift: column consent" in report.describe()


def test_plan_batches_by_partition_then_file_groups() -> None:
    files = [source(f"t=b/{n}.parquet", rows=n + 1) for n in range(5)] + [source("t=a/x.parquet")]
    batches = plan_batches(files, max_files_per_batch=2)
    assert [(b.index, b.label, len(b.files)) for b in batches] == [
        (0, "t=a", 1),
        (1, "t=b", 2),
        (2, "t=b", 2),
        (3, "t=b", 1),
    ]
    assert [b.rows for b in batches] == [10, 3, 7, 5]
    assert plan_batches([source("x.parquet")])[0].label == "all"
    with pytest.raises(ValueError):
        plan_batches(files, 0)


def make_test_plan(tmp_path: Path, strategy: str = "shadow") -> Plan:
    generate_legacy(LegacyConfig(out=tmp_path, tenants=1, dates=2, rows_per_file=5))
    listing = list_source(tmp_path)
    report = preflight(listing, key_columns=["record_id"])
    return make_plan("m1", strategy, str(tmp_path), "db.t", listing, report, ["record_id"])


def test_plan_round_trips_and_refuses_a_failed_preflight(tmp_path: Path) -> None:
    plan = make_test_plan(tmp_path)
    assert Plan.from_json(plan.to_json()) == plan
    assert plan.rows == 20 and len(plan.batches) == 2
    listing = list_source(tmp_path)
    with pytest.raises(ValueError, match="already exists"):
        make_plan(
            "m1", "shadow", "x", "db.t", listing, preflight(listing, target_exists="db.t"), []
        )
    with pytest.raises(ValueError, match="strategy"):
        make_plan("m1", "copy", "x", "db.t", listing, preflight(listing), [])


def test_changed_files_names_rewritten_removed_and_added(tmp_path: Path) -> None:
    plan = make_test_plan(tmp_path)
    assert changed_files(plan.files, fingerprints(tmp_path)) == []
    first, second = sorted(plan.files)[:2]
    table = pq.read_table(tmp_path / first)
    pq.write_table(table.slice(1), tmp_path / first)
    (tmp_path / second).rename(tmp_path / (second + ".new.parquet"))
    assert changed_files(plan.files, fingerprints(tmp_path)) == [
        f"{first} was rewritten (size or modification time changed)",
        f"{second} was removed",
        f"{second}.new.parquet was added",
    ]


def test_resume_actions_skip_finished_batches_and_finish_quarantines(tmp_path: Path) -> None:
    plan = make_test_plan(tmp_path)
    assert [a.batch.index for a in resume_actions(plan.batches, {})] == [0, 1]
    done = {0: BatchState(1, 9, 1), 1: BatchState(2, 10, 0)}
    assert resume_actions(plan.batches, done) == []
    killed_between = {0: BatchState(1, 9, 0)}  # committed, its bad row not quarantined yet
    actions = resume_actions(plan.batches, killed_between)
    assert [(a.batch.index, a.hydrate, a.quarantine_only) for a in actions] == [
        (0, False, True),
        (1, True, False),
    ]


def facts(plan: Plan, **changes: object) -> AuditFacts:
    fields: dict[str, object] = {
        "batch_states": {0: BatchState(1, 9, 1), 1: BatchState(2, 10, 0)},
        "table_rows": 19,
        "table_columns": (*plan.columns, *plan.partition_columns),
        "source_checksum": 100,
        "quarantined_checksum": 7,
        "table_checksum": 93,
    }
    return AuditFacts(**{**fields, **changes})  # type: ignore[arg-type]


def test_audit_differences(tmp_path: Path) -> None:
    plan = make_test_plan(tmp_path)
    assert audit_differences(plan, facts(plan)) == []
    differences = audit_differences(
        plan,
        facts(
            plan,
            batch_states={0: BatchState(1, 9, 0)},
            table_rows=9,
            table_columns=(("record_id", "string"), ("payload", "binary")),
            table_checksum=90,
            changes=("a.parquet was removed",),
        ),
    )
    assert differences[0] == "source file changed after it was read: a.parquet was removed"
    assert any("batch 0" in d and "9 migrated + 0 quarantined" in d for d in differences)
    assert any("batch 1" in d and "is not in the table" in d for d in differences)
    assert any(d.startswith("total: 20 source rows but 9") for d in differences)
    assert any(
        d.startswith("schema: missing ['primary_id'") and "payload string -> binary" in d
        for d in differences
    )
    assert any("checksum" in d and "93" in d and "90" in d for d in differences)
    in_place = make_plan(
        "m2", "in_place", plan.source_root, "db.t", list_source(tmp_path),
        preflight(list_source(tmp_path)), ["record_id"],
    )  # fmt: skip
    assert audit_differences(in_place, facts(in_place, batch_states={}, table_checksum=0)) == [
        "total: 20 source rows but 19 in the table + 0 quarantined"
    ]


def test_lineage_from_commit_files(tmp_path: Path) -> None:
    log = tmp_path / "_delta_log"
    log.mkdir()
    meta = {"migration": "m1", "batch": 3, "files": ["t=a/x.parquet"]}
    commit = {
        "commitInfo": {
            "operation": "WRITE",
            "operationMetrics": {"numOutputRows": "42"},
            "userMetadata": json.dumps(meta),
        }
    }
    (log / "00000000000000000000.json").write_text('{"commitInfo":{"operation":"CREATE"}}\n')
    (log / "00000000000000000001.json").write_text(json.dumps(commit) + '\n{"add":{}}\n')
    other = {**commit["commitInfo"], "userMetadata": json.dumps({**meta, "migration": "m2"})}
    (log / "00000000000000000002.json").write_text(json.dumps({"commitInfo": other}))
    found = batch_commits(tmp_path, "m1")
    assert list(found) == [3]
    assert (found[3].version, found[3].rows, found[3].files) == (1, 42, ("t=a/x.parquet",))
    assert parse_commit(2, (log / "00000000000000000002.json").read_text(), "m1") is None
    assert batch_commits(tmp_path / "nowhere", "m1") == {}


def test_contract_checks_and_their_sql() -> None:
    checks = contract_checks(
        {"name": "records_snapshot"}, ["tenant_id", "record_id"], ["tenant_id"]
    )
    codes = {check.error_code for check in checks}
    assert {"missing_field", "invalid_record_id", "invalid_identity", "not_an_object"} <= codes
    assert "invalid_tenant_id" in codes and "too_many_related_ids" not in codes
    sql = problems_sql(checks)
    assert sql.startswith("filter(array(") and sql.count("named_struct") == len(checks)
    assert "'record_id must be 1 to 256 characters'" in sql
    assert [c.column for c in contract_checks({"name": "keys"}, ["k"], [])] == ["k"]
    assert contract_checks({"name": "none"}, ["k"], []) == []
    with pytest.raises(ValueError, match="unknown contract"):
        contract_checks({"name": "nope"}, [], [])


def test_progress_line() -> None:
    assert progress_line("hydrate", 3, 12, 30_000, 10.0) == (
        "hydrate [#####---------------] 3/12 batches, 30,000 rows, 3,000 rows/s"
    )
    stream = io.StringIO()
    progress = Progress("hydrate", 2, stream=stream)
    progress.advance(5)
    assert stream.getvalue().startswith("hydrate [##########----------] 1/2 batches, 5 rows")


def test_trail_standing_shows_each_migrations_last_step() -> None:
    def step(name: str, minute: int, status: str = "ok", message: str = "") -> dict:
        at = datetime(2026, 1, 1, 0, minute)
        return Step("m1", "/data/x", "shadow", name, at, at, status, message, batch=None).row()

    rows = [step("audit", 5, "failed", "batch 1 differs"), step("hydrate", 3)]
    (line,) = standing(rows)
    assert line.startswith("m1 (shadow, /data/x): last step audit failed at 2026-01-01 00:05:00")
    assert line.endswith(": batch 1 differs")


def test_state_files_and_maintenance(tmp_path: Path) -> None:
    files = MigrationFiles(tmp_path, "m1")
    assert not files.exists() and files.state() == MigrationState()
    with pytest.raises(FileNotFoundError, match="no migration m1"):
        files.plan()
    files.save_state(MigrationState(phase="published", moved_to="/x"))
    assert files.state().phase == "published"
    with pytest.raises(ValueError):
        check_migration_id("Bad Id")
    maintenance.enter(tmp_path, "m1", "publish")
    maintenance.assert_writable(tmp_path, "m1")  # its own migration may write
    with pytest.raises(maintenance.InMaintenance, match="migration m1 is at step publish"):
        maintenance.assert_writable(tmp_path)
    maintenance.leave(tmp_path)
    maintenance.assert_writable(tmp_path)
