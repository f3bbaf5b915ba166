"""`dbt build` runs killed with SIGKILL inside the ingest and inside the records part of a run,
then run to completion, leave every output of the records pipeline as uninterrupted runs do:
each landed line staged exactly once (SPEC.md section 2), each wave in one ingest batch, the
same `records`, each change in `record_notifications` exactly once (SPEC.md section 4: "even
when a run was killed and repeated"), the same ingest_errors, ingest_file_accounting and
tenant_lag.

The data lands in two waves of the same records: the second updates, deletes and re-creates
records of the first (pytests/support/two_waves.py). Both waves are built by uninterrupted
in-process runs (the scoped lake of conftest.py, whose records test_scoped_and_batched_runs
checks against a plain fold of the landed lines) and by `dbt build` subprocesses on a lake of
their own (see SubprocessLake), one build per wave over every tenant, whose second-wave runs are
killed at four points, each detected by the files the run has written:
(i) the ingest has planned its micro-batch (its offsets are written), nothing is staged;
(a) int_record_states has committed the wave, records has not;
(b) records has committed it, record_notifications has not;
(c) record_notifications has committed it, the run has not ended (the staged lines' erasure
    rewrite and the monitoring models run after it).
The second wave also requests the erasure of a person whose record the first wave landed
(pytests/support/two_waves.py), so the runs killed at (a), (b) and (c) are killed mid-erasure:
the completed lake has deleted her record once, with reason `erasure`, and erased her lines in
the landing tables, as the uninterrupted runs did.
A last run completes; then the outputs are compared with the scoped lake's, ingest batch numbers
aside (that lake's second wave came in micro-batches of one file). That last run is also the
idempotence check: records and record_notifications were already up to date, and a re-run must
add no version to either. A run killed once the ingest has staged its batch in a landing table,
before its checkpoint commit, is the watch story's (test_watch.py,
test_the_watcher_was_killed_between_staging_and_its_commit).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from profile_lake.delta_reader import read_delta
from profile_lake.report import write_report
from profile_lake.run_history import latest_events
from pytests.integration.reference_lake.conftest import ScopedLake
from pytests.support.dbt_subprocess import DbtOutcome
from pytests.support.landing import ingest_batches, landed_lines, staged_lines
from pytests.support.subprocess_lake import KILLED, SubprocessLake, row_multiset
from pytests.support.two_waves import (
    ERASED_RECORD,
    ERASED_TENANT,
    ERASURE_REQUEST_ID,
    RELATED_RECORD,
    SELECTION,
    Waves,
)

pytestmark = pytest.mark.integration

# (table, layer): the tables whose commits place the kills
RECORD_STATES = ("int_record_states", "intermediate")
RECORDS = ("records", "")
NOTIFICATIONS = ("record_notifications", "")
WATCHED = (RECORD_STATES, RECORDS, NOTIFICATIONS)

# the columns compared with the scoped lake: all but ingest batch numbers
RECORD_COLUMNS = [
    "tenant_id",
    "record_id",
    "primary_id",
    "record_type",
    "related_ids",
    "payload",
    "event_ts",
]
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
ACCOUNTING_COLUMNS = [
    "stream",
    "source_file",
    "lines_landed",
    "lines_accepted",
    "lines_quarantined",
    "problems_found",
]
LAG_COLUMNS = [
    "tenant_id",
    "staged_lines_not_applied",
    "lag_minutes",
    "max_lag_minutes",
    "newest_landed_event_ts",
    "newest_applied_event_ts",
]


# ---------- the killed runs


@dataclass(frozen=True)
class Run:
    """One `dbt build` of the killed lake: where it was aimed, how it ended, the commits then."""

    point: str
    outcome: DbtOutcome
    commits: dict[str, int]
    ingest_commits: int  # micro-batches the ingest's checkpoint has committed
    landing_commits: int  # commits of the landing tables

    @property
    def exit_code(self) -> int:
        return self.outcome.returncode

    def __repr__(self) -> str:
        return (
            f"Run({self.point!r}, {self.outcome.describe()}, commits {self.commits}, "
            f"ingest commits {self.ingest_commits}, landing commits {self.landing_commits})"
        )


@dataclass(frozen=True)
class KilledLake:
    lake: SubprocessLake
    first_wave: Run
    ingest_killed: Run
    killed: tuple[Run, Run, Run]
    completed: Run


def _commits(lake: SubprocessLake) -> dict[str, int]:
    return {table: lake.delta_commits(table, layer) for table, layer in WATCHED}


def _build(lake: SubprocessLake, point: str, kill_when: Callable[[], bool] | None = None) -> Run:
    """Build; with `kill_when`, kill the run as soon as it holds."""
    outcome = lake.build(kill_when=kill_when)
    return Run(
        point,
        outcome,
        _commits(lake),
        lake.checkpoint_entries("commits"),
        lake.landing_commits(),
    )


def _committed(lake: SubprocessLake, table: tuple[str, str]) -> Callable[[], bool]:
    """Holds once `table` has a commit more than now."""
    before = lake.delta_commits(*table)
    return lambda: lake.delta_commits(*table) > before


def _planned(lake: SubprocessLake) -> Callable[[], bool]:
    """Holds once the ingest has written the offsets of a micro-batch more than now."""
    before = lake.checkpoint_entries("offsets")
    return lambda: lake.checkpoint_entries("offsets") > before


@pytest.fixture(scope="module")
def killed_lake(waves: Waves, tmp_path_factory) -> KilledLake:
    home = tmp_path_factory.mktemp("fault-killed-lake")
    landing = home / "landing"
    lake = SubprocessLake(home, landing, "faults_killed", build_args=SELECTION)

    def ended_as(run: Run, exit_code: int) -> Run:
        # a run that failed or ended by itself makes the next ones meaningless: stop here
        assert run.exit_code == exit_code, f"{run}\n{run.outcome.tail()}"
        return run

    waves.land(0, landing)
    first = ended_as(_build(lake, "first wave"), 0)
    waves.land(1, landing)
    ingest_killed = ended_as(_build(lake, "(i) ingest batch planned", _planned(lake)), KILLED)
    killed = (
        ended_as(
            _build(lake, "(a) record states committed", _committed(lake, RECORD_STATES)), KILLED
        ),
        ended_as(_build(lake, "(b) records committed", _committed(lake, RECORDS)), KILLED),
        ended_as(
            _build(lake, "(c) notifications committed", _committed(lake, NOTIFICATIONS)), KILLED
        ),
    )
    completed = ended_as(_build(lake, "completion"), 0)
    return KilledLake(lake, first, ingest_killed, killed, completed)


def test_the_ingest_run_was_killed_where_intended(killed_lake: KilledLake) -> None:
    """The killed ingest planned its micro-batch: it staged nothing, committed no micro-batch,
    and no model ran."""
    first_wave, planned = killed_lake.first_wave, killed_lake.ingest_killed
    assert planned.ingest_commits == first_wave.ingest_commits, f"{planned}"
    assert planned.commits == first_wave.commits, f"{planned}"
    assert planned.landing_commits == first_wave.landing_commits, f"{planned}"


def test_each_run_was_killed_where_intended(killed_lake: KilledLake) -> None:
    first_wave, killed = killed_lake.first_wave.commits, killed_lake.killed
    assert [run.exit_code for run in killed] == [KILLED] * 3, f"{killed}"
    states, records, notifications = (table for table, _ in WATCHED)
    after_states, after_records, after_notifications = (run.commits for run in killed)
    # (a) the new states committed, records not yet
    assert after_states[states] > first_wave[states], f"{killed}"
    assert after_states[records] == first_wave[records], f"{killed}"
    assert after_states[notifications] == first_wave[notifications], f"{killed}"
    # (b) records committed, the notifications not yet
    assert after_records[records] > first_wave[records], f"{killed}"
    assert after_records[notifications] == first_wave[notifications], f"{killed}"
    # (c) the notifications committed
    assert after_notifications[notifications] > first_wave[notifications], f"{killed}"


def test_every_landed_line_is_staged_exactly_once_each_wave_in_one_batch(
    killed_lake: KilledLake, waves: Waves
) -> None:
    lake = killed_lake.lake
    assert staged_lines(lake.warehouse, lake.schema) == landed_lines(lake.landing)
    assert ingest_batches(lake.warehouse, lake.schema) == len(waves.files)


def test_the_run_history_shows_the_killed_runs(killed_lake: KilledLake, tmp_path) -> None:
    """The killed runs started and never ended: the next run marked each killed at its start
    (its process was gone), and the report lists them."""
    lake = killed_lake.lake
    events = read_delta(lake.table_path("run_events", "control")).to_pylist()
    runs = latest_events(events)  # newest first
    assert [run["status"] for run in runs] == ["success", *["killed"] * 4, "success"]
    completed = runs[0]
    for killed in runs[1:-1]:
        assert killed["ended_at"] is None and "ended without ending the run" in killed["message"]
        marked = [e for e in events if e["run_id"] == killed["run_id"] and e["event"] == "killed"]
        assert len(marked) == 1 and marked[0]["event_at"] < completed["ended_at"]
    # the first wave's run staged its files; run (a) staged the second wave's before its kill
    assert runs[-1]["files_ingested"] > 0 and completed["files_ingested"] == 0
    html = write_report(lake.home, lake.schema, tmp_path / "report.html").read_text()
    assert html.count("<td>killed</td>") == 4


def test_a_build_without_new_changes_adds_no_version(killed_lake: KilledLake) -> None:
    """The completing run found records and record_notifications up to date (the last killed run
    committed both): a re-run with nothing new writes neither."""
    last_killed, completed = killed_lake.killed[-1], killed_lake.completed
    for table, _ in (RECORDS, NOTIFICATIONS):
        assert completed.commits[table] == last_killed.commits[table], f"{completed}"


def test_records_equal_the_uninterrupted_runs(
    killed_lake: KilledLake, scoped_lake: ScopedLake
) -> None:
    killed = read_delta(killed_lake.lake.table_path("records"))
    assert killed.num_rows > 0
    assert row_multiset(killed, RECORD_COLUMNS) == row_multiset(
        read_delta(scoped_lake.table_path("records")), RECORD_COLUMNS
    )


def test_every_change_is_notified_exactly_once(
    killed_lake: KilledLake, scoped_lake: ScopedLake
) -> None:
    killed = read_delta(killed_lake.lake.table_path("record_notifications"))
    expected = read_delta(scoped_lake.table_path("record_notifications"))
    changes = ["tenant_id", "record_id", "change_type"]
    assert row_multiset(killed, changes) == row_multiset(expected, changes)
    once = ["tenant_id", "record_id", "records_version", "change_type"]
    repeated = {key: n for key, n in row_multiset(killed, once).items() if n > 1}
    assert not repeated


def test_monitoring_tables_equal_the_uninterrupted_runs(
    killed_lake: KilledLake, scoped_lake: ScopedLake
) -> None:
    for table, columns in (
        ("ingest_errors", ERROR_COLUMNS),
        ("ingest_file_accounting", ACCOUNTING_COLUMNS),
        ("tenant_lag", LAG_COLUMNS),
    ):
        killed = read_delta(killed_lake.lake.table_path(table))
        assert killed.num_rows > 0, table
        assert row_multiset(killed, columns) == row_multiset(
            read_delta(scoped_lake.table_path(table)), columns
        ), table
    lag = read_delta(killed_lake.lake.table_path("tenant_lag"))
    assert set(lag["staged_lines_not_applied"].to_pylist()) == {0}


def test_an_erasure_killed_midway_is_completed_once(
    killed_lake: KilledLake, scoped_lake: ScopedLake
) -> None:
    """Her record is deleted once (notified once, with reason erasure), the record relating to
    her keeps no link to her (its insert, in the run that applied the request, is a change the
    landed lines made: no reason), her two lines are erased rows in the landing table, as in the
    uninterrupted runs; the request was fixed once."""
    lakes = {"killed": killed_lake.lake.table_path, "scoped": scoped_lake.table_path}
    for name, table_path in lakes.items():
        notified = [
            (row["record_id"], row["change_type"])
            for row in read_delta(table_path("record_notifications")).to_pylist()
            if row["reason"] == "erasure"
        ]
        assert notified == [(ERASED_RECORD, "delete")], name
        records = {
            row["record_id"]: row
            for row in read_delta(table_path("records")).to_pylist()
            if row["tenant_id"] == ERASED_TENANT
        }
        assert ERASED_RECORD not in records and records[RELATED_RECORD]["related_ids"] == [], name
    scoped = scoped_lake.lake
    landing_tables = {
        "killed": killed_lake.lake.table_path("records", "landing"),
        "scoped": scoped.lake_home / "warehouse" / f"{scoped.schema}_landing.db" / "records",
    }
    erased_lines = {
        name: sorted(
            (row["source_file"], row["line_number"], row["line"])
            for row in read_delta(path).to_pylist()
            if row["is_erased"]
        )
        for name, path in landing_tables.items()
    }
    assert (
        erased_lines["killed"]
        == erased_lines["scoped"]
        == [
            ("records/erased-person-1.jsonl", 1, None),
            ("records/erased-person-2.jsonl", 1, None),
        ]
    )
    events = read_delta(killed_lake.lake.table_path("erasure_events", "control")).to_pylist()
    assert [(row["request_id"], row["event"]) for row in events] == [(ERASURE_REQUEST_ID, "fixed")]
