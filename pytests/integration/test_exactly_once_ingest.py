"""Each landed file is ingested exactly once (SPEC.md section 2), across runs and across killed
runs: (a) files landed in two rounds are each staged once; (b) `dbt build` runs killed with
SIGKILL inside the ingest (the first micro-batch planned; the first staging commit), then run to
completion, stage every line once and give the same ingest_errors and records as an
uninterrupted run on the same files. Kills during the models, after the ingest, are
test_build_fault_injection's (it compares ingest_errors and the file accounting too).

The killed runs are `dbt build` subprocesses with their own PROFILE_LAKE_HOME: embedded Derby
allows one process per metastore, and the pytest process owns the test lake's.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from profile_lake.delta_reader import read_delta
from profile_lake.generator.config import GeneratorConfig
from profile_lake.generator.core import generate
from profile_lake.ingest.lines import STREAMS
from profile_lake.report import write_report
from profile_lake.run_history import latest_events
from pytests.support.dbt_runner import run_dbt
from pytests.support.expected import landing_lines
from pytests.support.subprocess_lake import KILLED, SubprocessLake, row_multiset

pytestmark = pytest.mark.integration

# The killed runs build only what the comparison needs (the ingest runs on every build), without
# the data tests: the assertions here check what they would, and the runs stay short.
SELECTION = ["--select", "+ingest_errors", "+records", "--exclude", "resource_type:test"]
ONE_FILE_PER_BATCH = ["--vars", "{ingest_max_files_per_batch: 1}"]


def land(landing: Path, seed: int) -> None:
    """A small generated batch of landing files, beside those already there."""
    generate(
        GeneratorConfig(
            out=landing,
            seed=seed,
            tenants=2,
            records_per_tenant=30,
            renames_per_tenant=10,
            names_per_tenant=15,
            lines_per_file=40,
            bad_rate=0.05,
            gzip_every=4,
            quiet=True,
        )
    )


def landed(landing: Path) -> Counter:
    """(source_file, line_number) -> 1 for every line of every landing file."""
    return Counter(key for stream in STREAMS for key in landing_lines(landing, stream))


def staged(warehouse: Path, schema: str) -> Counter:
    """(source_file, line_number) -> how many times it is in the landing tables."""
    found: Counter = Counter()
    for stream in STREAMS:
        found.update(line_keys(read_delta(warehouse / f"{schema}_landing.db" / stream)))
    return found


def line_keys(table: pa.Table) -> list[tuple[str, int]]:
    return list(
        zip(table["source_file"].to_pylist(), table["line_number"].to_pylist(), strict=True)
    )


# ---------- (a) two rounds of files, each staged once


def test_files_landed_in_two_rounds_are_staged_once(spark, lake_home: Path, tmp_path) -> None:
    schema = "exactly_once_rounds"
    landing = tmp_path / "landing"
    env = {"PROFILE_LAKE_SCHEMA": schema, "PROFILE_LAKE_LANDING": str(landing)}
    target = lake_home / "target" / schema
    warehouse = lake_home / "warehouse"

    land(landing, seed=21)
    first_round = landed(landing)
    run_dbt(["build", "--select", "+path:models/staging"], env=env, target_path=target)
    assert staged(warehouse, schema) == first_round

    land(landing, seed=22)
    both_rounds = landed(landing)
    assert len(both_rounds) > len(first_round)
    run_dbt(["build", "--select", "+path:models/staging"], env=env, target_path=target)
    assert staged(warehouse, schema) == both_rounds

    # a run with no new file stages nothing
    run_dbt(["run", "--select", "stg_records__changes"], env=env, target_path=target)
    assert staged(warehouse, schema) == both_rounds
    accepted = read_delta(warehouse / f"{schema}_staging.db" / "stg_records__changes")
    keys = Counter(line_keys(accepted))
    assert set(keys.values()) == {1}
    assert set(keys) == {key for key in both_rounds if key[0].startswith("records/")}


# ---------- (b) killed runs


ERROR_COLUMNS = [
    "tenant_id",
    "stream",
    "source_file",
    "line_number",
    "stage",
    "error_code",
    "field",
    "error_message",
    "line",
]
RECORD_COLUMNS = [
    "tenant_id",
    "record_id",
    "primary_id",
    "record_type",
    "related_ids",
    "payload",
    "event_ts",
]


@pytest.fixture(scope="module")
def killed_landing(tmp_path_factory) -> Path:
    landing = tmp_path_factory.mktemp("killed-landing")
    land(landing, seed=31)
    return landing


@pytest.fixture(scope="module")
def uninterrupted(spark, lake_home: Path, killed_landing: Path) -> Path:
    """The same files built in one uninterrupted run, in the test session's own lake."""
    schema = "exactly_once_reference"
    env = {"PROFILE_LAKE_SCHEMA": schema, "PROFILE_LAKE_LANDING": str(killed_landing)}
    run_dbt(["build", *SELECTION], env=env, target_path=lake_home / "target" / schema)
    return lake_home / "warehouse" / f"{schema}.db"


@pytest.fixture(scope="module")
def killed_then_completed(killed_landing: Path, tmp_path_factory) -> tuple[SubprocessLake, list]:
    """Runs killed at two points of the ingest, then one run to completion."""
    lake = SubprocessLake(
        tmp_path_factory.mktemp("killed-lake"),
        killed_landing,
        "killed",
        build_args=(*SELECTION, *ONE_FILE_PER_BATCH),
    )
    outcomes = []

    # 1. the first micro-batch is planned (its offsets written), nothing staged yet
    code = lake.build(kill_when=lambda: lake.checkpoint_entries("offsets") >= 1).returncode
    outcomes.append(("first batch planned", code, lake.checkpoint_entries("commits")))

    # 2. the first staging commit of the next run: a batch staged in one table, its
    #    checkpoint commit not yet written
    before = lake.landing_commits()
    code = lake.build(kill_when=lambda: lake.landing_commits() > before).returncode
    outcomes.append(("first staging commit", code, lake.checkpoint_entries("commits")))

    completed = lake.build()
    assert completed.success, completed.tail()
    return lake, outcomes


def test_each_run_was_killed_where_intended(killed_then_completed, killed_landing) -> None:
    _, outcomes = killed_then_completed
    files = sum(1 for stream in STREAMS for _ in (killed_landing / stream).glob("*.jsonl*"))
    assert files >= 8, "enough files for several micro-batches"
    assert [code for _, code, _ in outcomes] == [KILLED] * 2, outcomes
    (_, _, after_planned), (_, _, after_staged) = outcomes
    assert after_planned < files and after_staged < files, outcomes


def test_every_line_is_staged_exactly_once(killed_then_completed, killed_landing) -> None:
    lake, _ = killed_then_completed
    assert staged(lake.warehouse, lake.schema) == landed(killed_landing)


def test_outputs_equal_an_uninterrupted_run(killed_then_completed, uninterrupted) -> None:
    lake, _ = killed_then_completed
    outputs = lake.warehouse / f"{lake.schema}.db"
    killed_errors = read_delta(outputs / "ingest_errors")
    assert killed_errors.num_rows > 0
    assert row_multiset(killed_errors, ERROR_COLUMNS) == row_multiset(
        read_delta(uninterrupted / "ingest_errors"), ERROR_COLUMNS
    )
    killed_records = read_delta(outputs / "records")
    assert killed_records.num_rows > 0
    assert row_multiset(killed_records, RECORD_COLUMNS) == row_multiset(
        read_delta(uninterrupted / "records"), RECORD_COLUMNS
    )


def test_the_run_history_shows_the_killed_runs(killed_then_completed, tmp_path) -> None:
    """Both killed runs started and never ended: the completed run marked them killed at its
    start (their processes were gone), and the report lists them."""
    lake, _ = killed_then_completed
    events = read_delta(lake.table_path("run_events", "control")).to_pylist()
    runs = latest_events(events)  # newest first
    assert [run["status"] for run in runs] == ["success", "killed", "killed"]
    completed = runs[0]
    for killed in runs[1:]:
        assert killed["ended_at"] is None and "ended without ending the run" in killed["message"]
        marked = [e for e in events if e["run_id"] == killed["run_id"] and e["event"] == "killed"]
        assert len(marked) == 1 and marked[0]["event_at"] < completed["ended_at"]
    assert completed["files_ingested"] > 0
    html = write_report(lake.home, lake.schema, tmp_path / "report.html").read_text()
    assert html.count("<td>killed</td>") == 2
