"""One writer per tenant (docs/locks.md), with real `dbt build`
processes sharing one lake through the `shared` target's Hive metastore on PostgreSQL:

- runs A and G (the other tenant) start on a lake with only its seeds: both find its tables
  missing (this test holds the whole-lake step until both wait for it, then on until B, C and K
  have found their tenants held), then build them by turns, so each is created once, never
  replaced by the run that found it missing too;
- while run A holds tenant acme, run B (no waiting) stops with an error naming the tenant and A,
  and run C waits, says so, and completes once A has released the tenant;
- run K, a full refresh of every model (no waiting), stops naming the run holding a tenant
  before its ingest drops the landing tables A reads;
- run E is SIGKILLed holding acme while run J, of the other tenant, finds the whole-lake step
  held (by this test process, a live holder): J processes its tenant, then waits at its first
  whole-lake model, says so, and completes once it is free;
- run F recovers E's stale lock at once (E's process is gone) and completes while J holds the
  other tenant: runs of different tenants go on side by side;
- at the end no lock is left, and no change was notified twice;
- the metastore is really shared: PostgreSQL sees A and another run connected at the same
  moment, and lists the tables the runs made; its password is on no process's command line.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from profile_lake.delta_reader import read_delta
from profile_lake.generator.config import GeneratorConfig
from profile_lake.generator.core import generate
from profile_lake.locks.process import process_started
from pytests.support.dbt_subprocess import DbtOutcome, DbtSubprocess, RunningDbt
from pytests.support.postgres import PostgresConnection

pytestmark = pytest.mark.integration

SCHEMA = "locked"
RECORDS_PART = ["--select", "+record_notifications", "--exclude", "resource_type:test"]
# runs of different tenants at the same time leave out the seeds: loading them is a whole-lake
# step (each load replaces them), which would make the runs take turns from their start
TENANT_PART = [
    "--select",
    "+record_notifications",
    "--exclude",
    "resource_type:test",
    "resource_type:seed",
]
# a tenant's whole staging: each stream's lines, accepted or in ingest_errors, so that the
# other run's file accounting test finds every staged line of it accounted for
NEW_LAKE_PART = [
    "--select",
    "+record_notifications",
    "+ingest_errors",
    "--exclude",
    "resource_type:test",
    "resource_type:seed",
]
# a tenant's records, and tenant_lag with what it reads (int_tenant_batches, a whole-lake model
# too): WHOLE_LAKE_PART then finds every table it reads, and tenant_lag to update
RECORDS_AND_LAG_PART = [
    "--select",
    "+record_notifications",
    "+tenant_lag",
    "--exclude",
    "resource_type:test",
    "resource_type:seed",
]
# a tenant's states, then tenant_lag (a whole-lake model, downstream of them)
WHOLE_LAKE_PART = [
    "--select",
    "int_record_states",
    "tenant_lag",
    "--exclude",
    "resource_type:test",
    "resource_type:seed",
]
TEST_HOLDER_RUN_ID = "pytest-holder"
# the incremental models A and G both build, each from scratch on the new lake
INCREMENTAL_TABLES = {
    "stg_records__changes": f"{SCHEMA}_staging",
    "int_record_states": f"{SCHEMA}_intermediate",
    "records": SCHEMA,
    "record_notifications": SCHEMA,
}
# Guards against a hung run, not goals: beside the other test worker, five runs on two cores
# (three JVMs starting while two wait) take minutes.
RUN_TIMEOUT_SECONDS = 1800
# C waits for this test to let go of the whole-lake step, then for A's build (after G's, if G
# builds first)
C_WAITS_SECONDS = 1800


@dataclass(frozen=True)
class SharedLake:
    runner: DbtSubprocess
    metastore: PostgresConnection

    @property
    def lock_table(self) -> Path:
        return self.runner.home / "warehouse" / f"{SCHEMA}_control.db" / "run_locks"

    def table(self, name: str) -> Path:
        return self.runner.home / "warehouse" / f"{SCHEMA}.db" / name

    def start(
        self,
        name: str,
        args: list[str],
        tenants: list[str] | None,
        wait_seconds: int,
        command: str = "build",
    ) -> RunningDbt:
        """`dbt <command>` (build) as run `name` (its metastore clients' name in PostgreSQL),
        for `tenants` (None: every tenant)."""
        scope = "" if tenants is None else "tenants: [" + ", ".join(tenants) + "], "
        variables = "{" + scope + f"tenant_lock_wait_seconds: {wait_seconds}}}"
        client = self.metastore.with_application_name(name).metastore_env()
        runner = replace(self.runner, env={**self.runner.env, **client})
        return runner.start([command, *args, "--vars", variables])

    def connected_runs(self) -> frozenset[str]:
        """The runs connected to the metastore database right now."""
        rows = self.metastore.query(
            "select distinct application_name from pg_stat_activity where datname = %s",
            [self.metastore.database],
        )
        return frozenset(name for (name,) in rows if name)

    def metastore_tables(self, schema: str) -> set[str]:
        """The tables the metastore lists in `schema`, read from its own PostgreSQL tables."""
        rows = self.metastore.query(
            'select t."TBL_NAME" from "TBLS" t join "DBS" d on d."DB_ID" = t."DB_ID" '
            'where d."NAME" = %s',
            [schema],
        )
        return {name for (name,) in rows}

    def commits(self, schema: str, name: str) -> list[list[dict]]:
        """The actions of each commit of table `schema.name`, oldest first, from its Delta log."""
        log = self.runner.home / "warehouse" / f"{schema}.db" / name / "_delta_log"
        return [
            [json.loads(line) for line in commit.read_text().splitlines()]
            for commit in sorted(log.glob("*.json"))
        ]

    def table_id(self, schema: str, name: str) -> str:
        """The id Delta gave table `schema.name` when it was created (a new one if it is
        dropped and made again)."""
        first = self.commits(schema, name)[0]
        return next(action["metaData"]["id"] for action in first if "metaData" in action)

    def table_builds(self, schema: str, name: str) -> list[str]:
        """The operations of the commits that built table `schema.name` from scratch."""
        return [
            action["commitInfo"]["operation"]
            for commit in self.commits(schema, name)
            for action in commit
            if action.get("commitInfo", {}).get("operation", "").endswith("TABLE AS SELECT")
        ]

    def holders(self) -> list[dict]:
        """Rows of the lock table, read from its files (the runs own the metastore)."""
        if not (self.lock_table / "_delta_log").is_dir():
            return []
        try:
            return read_delta(self.lock_table).to_pylist()
        except Exception:  # a commit being written: read again at the next poll
            return []

    def wait_for_holder(self, key: str, run: RunningDbt) -> dict:
        deadline = time.monotonic() + RUN_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            found = [row for row in self.holders() if row["lock_key"] == key]
            if found:
                return found[0]
            if run.poll() is not None:
                pytest.fail(f"{run.args} ended before holding {key}:\n{run.wait().tail()}")
            time.sleep(0.25)
        pytest.fail(f"nobody held {key} within {RUN_TIMEOUT_SECONDS}s")


def retrying_conflicts(spark, statement: str) -> None:
    """Run a statement on the lock table, again if a run's commit came in between."""
    for attempt in range(20):
        try:
            spark.sql(statement)
            return
        except Exception as error:
            if "Concurrent" not in str(error) or attempt == 19:
                raise
            time.sleep(0.2)


def hold_whole_lake_lock(spark, lock_table: Path) -> None:
    """Make this test process the live holder of the whole-lake lock, as a run would be."""
    pid = os.getpid()
    table = f"delta.`{lock_table}`"
    # one holder per key
    retrying_conflicts(spark, f"delete from {table} where lock_key = 'whole-lake'")
    retrying_conflicts(
        spark,
        f"insert into {table} (lock_key, run_id, host, pid, process_started, command, "
        "acquired_at, expires_at) "
        f"select 'whole-lake', '{TEST_HOLDER_RUN_ID}', '{socket.gethostname()}', {pid}, "
        f"'{process_started(pid)}', 'pytest', current_timestamp(), "
        "current_timestamp() + interval 1 hour",
    )


def release_whole_lake_lock(spark, lock_table: Path) -> None:
    retrying_conflicts(
        spark, f"delete from delta.`{lock_table}` where run_id = '{TEST_HOLDER_RUN_ID}'"
    )


def wait_for_output(run: RunningDbt, text: str) -> None:
    deadline = time.monotonic() + RUN_TIMEOUT_SECONDS
    log = run.run_dir / "output.log"
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        if run.poll() is not None:
            pytest.fail(f"{run.args} ended before printing {text!r}:\n{run.wait().tail()}")
        time.sleep(0.5)
    pytest.fail(f"{run.args} did not print {text!r} within {RUN_TIMEOUT_SECONDS}s")


def command_lines_containing(text: str) -> list[str]:
    """The command lines of this host's processes that contain `text`."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # the process has ended
            continue
        if text in argv:
            found.append(argv)
    return found


@dataclass(frozen=True)
class Outcomes:
    lake: SharedLake
    runs: dict[str, DbtOutcome]
    holders: dict[str, dict]
    a_ended: float
    connected_together: set[frozenset[str]]
    password_seen_on: list[str]


@pytest.fixture(scope="module")
def lock_runs(postgres_server, tmp_path_factory, spark) -> Iterator[Outcomes]:
    connection = postgres_server.new_database("tenant_lock")
    home = tmp_path_factory.mktemp("tenant-lock-lake")
    landing = home / "landing"
    generate(
        GeneratorConfig(
            out=landing,
            seed=51,
            tenants=2,
            records_per_tenant=20,
            renames_per_tenant=3,
            names_per_tenant=3,
            lines_per_file=40,
            bad_rate=0.05,
            gzip_every=0,
            quiet=True,
        )
    )
    lake = SharedLake(
        DbtSubprocess(
            home,
            target="shared",
            env={"PROFILE_LAKE_LANDING": str(landing), "PROFILE_LAKE_SCHEMA": SCHEMA},
        ),
        connection,
    )
    running: list[RunningDbt] = []
    runs: dict[str, DbtOutcome] = {}
    holders: dict[str, dict] = {}
    connected_together: set[frozenset[str]] = set()
    password_seen_on: list[str] = []

    def start(*args) -> RunningDbt:
        running.append(lake.start(*args))
        return running[-1]

    try:
        # S loads the seeds alone: the first run sets up the metastore and the lock table
        # (two at once would race: docs/targets.md). Then A and G, of different tenants,
        # start on a lake without any model's table: this test holds the whole-lake step
        # until both wait for it at their first table (found missing), A holding acme and G
        # globex; it goes on holding it while B, C and K arrive, so that A holds acme for them
        # however short its build.
        runs["S"] = start("S", [], None, 0, "seed").wait(RUN_TIMEOUT_SECONDS)
        assert runs["S"].success, runs["S"].tail()
        hold_whole_lake_lock(spark, lake.lock_table)
        try:
            a = start("A", RECORDS_AND_LAG_PART, ["acme"], 0)
            g = start("G", NEW_LAKE_PART, ["globex"], 0)
            holders["A"] = lake.wait_for_holder("tenant:acme", a)
            held_by_test = f"the whole-lake step is locked by run {TEST_HOLDER_RUN_ID}"
            for run in (a, g):
                wait_for_output(run, held_by_test)
            # K, a full refresh of every tenant and model, must not drop the landing tables
            # A has staged and is to read
            holders["landing before K"] = {"id": lake.table_id(f"{SCHEMA}_landing", "records")}
            k = start("K", ["--full-refresh", "--exclude", "resource_type:test"], None, 0)
            b = start("B", RECORDS_PART, ["acme"], 0)
            c = start("C", RECORDS_PART, ["acme"], C_WAITS_SECONDS)
            # B and K stop at the tenants A and G hold; one let through would wait here for
            # the whole-lake step (up to an hour): fail at once instead
            deadline = time.monotonic() + RUN_TIMEOUT_SECONDS
            while b.poll() is None or k.poll() is None:
                for run in (b, k):
                    log = run.run_dir / "output.log"
                    output = log.read_text(errors="replace") if log.exists() else ""
                    if held_by_test in output:
                        pytest.fail(f"{run.args} got past its tenants:\n{output[-3000:]}")
                if time.monotonic() > deadline:
                    pytest.fail(f"B or K still ran after {RUN_TIMEOUT_SECONDS}s, A holding acme")
                connected_together.add(lake.connected_runs())
                password_seen_on += command_lines_containing(connection.password)
                time.sleep(0.25)
            wait_for_output(c, f"waiting (up to {C_WAITS_SECONDS} s)")
        finally:
            release_whole_lake_lock(spark, lake.lock_table)
        runs["B"] = b.wait(RUN_TIMEOUT_SECONDS)
        runs["K"] = k.wait(RUN_TIMEOUT_SECONDS)
        holders["landing after K"] = {"id": lake.table_id(f"{SCHEMA}_landing", "records")}
        runs["A"] = a.wait(RUN_TIMEOUT_SECONDS)
        a_ended = a.ended
        runs["C"] = c.wait(RUN_TIMEOUT_SECONDS)
        holders["C ended"] = {"at": c.ended}
        runs["G"] = g.wait(RUN_TIMEOUT_SECONDS)

        # E (acme) and J (globex) start while this test holds the whole-lake step: E is
        # killed holding acme; J processes globex, then waits at its first whole-lake model
        hold_whole_lake_lock(spark, lake.lock_table)
        try:
            e = start("E", RECORDS_PART, ["acme"], 0)
            j = start("J", WHOLE_LAKE_PART, ["globex"], 0)
            holders["E"] = lake.wait_for_holder("tenant:acme", e)
            e.kill()
            runs["E"] = e.wait(RUN_TIMEOUT_SECONDS)
            holders["left by E"] = {row["lock_key"]: row for row in lake.holders()}
            wait_for_output(j, f"the whole-lake step is locked by run {TEST_HOLDER_RUN_ID}")
            # F recovers acme and processes it (no whole-lake model in its part) while J holds
            # globex, waiting for the whole-lake step (it polls every 2 s)
            f = start("F", TENANT_PART, ["acme"], 0)
            runs["F"] = f.wait(RUN_TIMEOUT_SECONDS)
            assert j.poll() is None, "J did not wait for the whole-lake step"
        finally:
            release_whole_lake_lock(spark, lake.lock_table)
        runs["J"] = j.wait(RUN_TIMEOUT_SECONDS)
        holders["F and J"] = {"F": (f.started, f.ended), "J": (j.started, j.ended)}
        yield Outcomes(lake, runs, holders, a_ended, connected_together, password_seen_on)
    finally:
        for run in running:
            run.kill()


def test_a_second_run_of_a_held_tenant_stops_naming_the_tenant_and_the_holder(lock_runs) -> None:
    holder = lock_runs.holders["A"]
    output = lock_runs.runs["B"].output()
    assert not lock_runs.runs["B"].success, output[-3000:]
    assert (
        f"tenant acme is locked by run {holder['run_id']} (dbt build, pid {holder['pid']} on "
        in output
    )
    assert "Gave up after" in output
    # a run-time condition, not a fault of the project's code
    assert "Runtime Error" in output and "Compilation Error" not in output
    assert lock_runs.runs["A"].success, lock_runs.runs["A"].tail()


def test_a_full_refresh_drops_nothing_while_another_run_holds_a_tenant(lock_runs) -> None:
    output = lock_runs.runs["K"].output()
    assert not lock_runs.runs["K"].success, output[-3000:]
    # by A or by G: both hold their tenant, waiting for the whole-lake step
    assert "every tenant is locked by run " in output and "Runtime Error" in output
    assert "dropping staging tables" not in output
    # the landing tables A was reading are the same tables, not dropped and made again
    assert lock_runs.holders["landing after K"] == lock_runs.holders["landing before K"]
    assert lock_runs.runs["A"].success, lock_runs.runs["A"].tail()


def test_a_run_that_may_wait_says_so_and_goes_on_after_the_holder(lock_runs) -> None:
    output = lock_runs.runs["C"].output()
    assert lock_runs.runs["C"].success, output[-3000:]
    assert "tenant acme is locked by run" in output
    assert f"waiting (up to {C_WAITS_SECONDS} s)" in output
    assert lock_runs.holders["C ended"]["at"] > lock_runs.a_ended


def test_two_runs_on_a_new_lake_build_its_tables_by_turns(lock_runs) -> None:
    a, g = lock_runs.runs["A"], lock_runs.runs["G"]
    assert a.success, a.tail()
    assert g.success, g.tail()
    # both waited at a missing table (the fixture saw to it); once the test let go, one of
    # them built the tables, and the other waited for that run, then merged into them
    waited_for_a_run = re.compile(
        f"the whole-lake step is locked by run (?!{TEST_HOLDER_RUN_ID})[^ ]+ \\(dbt build"
    )
    assert any(waited_for_a_run.search(run.output()) for run in (a, g)), g.tail()
    for table, schema in INCREMENTAL_TABLES.items():
        builds = lock_runs.lake.table_builds(schema, table)
        assert builds == ["CREATE OR REPLACE TABLE AS SELECT"], (table, builds)


def test_a_killed_runs_lock_is_recovered(lock_runs) -> None:
    killed = lock_runs.holders["E"]
    assert lock_runs.runs["E"].returncode == -signal.SIGKILL
    assert lock_runs.holders["left by E"]["tenant:acme"]["run_id"] == killed["run_id"]
    output = lock_runs.runs["F"].output()
    assert lock_runs.runs["F"].success, output[-3000:]
    assert (
        f"recovering the stale lock on tenant acme of run {killed['run_id']}" in output
        and f"its process {killed['pid']} on " in output
        and "is gone" in output
    )


def test_runs_of_different_tenants_go_on_side_by_side(lock_runs) -> None:
    """F ran its tenant from start to end while J held the other one."""
    for name in ("F", "J"):
        assert lock_runs.runs[name].success, lock_runs.runs[name].tail()
    (f_started, f_ended), (j_started, j_ended) = lock_runs.holders["F and J"].values()
    assert j_started < f_started and f_ended < j_ended


def test_a_whole_lake_step_waits_for_the_run_holding_it(lock_runs) -> None:
    output = lock_runs.runs["J"].output()
    assert lock_runs.runs["J"].success, output[-3000:]
    waiting = output.index(
        f"the whole-lake step is locked by run {TEST_HOLDER_RUN_ID} (pytest, pid {os.getpid()} on "
    )
    assert "waiting (up to 3600 s)" in output[waiting:]
    # its tenant's model ran before the wait, the whole-lake model after it
    assert created_at(output, "int_record_states") < waiting < created_at(output, "tenant_lag")


def created_at(output: str, model: str) -> int:
    """Where dbt's line saying it built `model` starts in `output`."""
    for line in output.splitlines(keepends=True):
        if " OK created " in line and f".{model} " in line:
            return output.index(line)
    raise AssertionError(f"no line says {model} was built:\n{output[-3000:]}")


def test_no_lock_is_left_and_no_change_is_notified_twice(lock_runs) -> None:
    assert lock_runs.lake.holders() == []
    notifications = read_delta(lock_runs.lake.table("record_notifications"))
    keys = Counter(
        zip(
            notifications["tenant_id"].to_pylist(),
            notifications["record_id"].to_pylist(),
            notifications["records_version"].to_pylist(),
            notifications["change_type"].to_pylist(),
            strict=True,
        )
    )
    assert keys and max(keys.values()) == 1
    assert {key[0] for key in keys} == {"acme", "globex"}
    records = read_delta(lock_runs.lake.table("records"))
    live = set(zip(records["tenant_id"].to_pylist(), records["record_id"].to_pylist(), strict=True))
    inserted = {(key[0], key[1]) for key in keys if key[3] == "insert"}
    assert live <= inserted


def test_the_runs_shared_one_metastore(lock_runs) -> None:
    assert any(
        {"A", "B"} <= names or {"A", "C"} <= names for names in lock_runs.connected_together
    ), (
        f"A and another run were never connected to the metastore at once: "
        f"{lock_runs.connected_together}"
    )
    assert {"records", "record_notifications"} <= lock_runs.lake.metastore_tables(SCHEMA)
    # the runs logged in with it (from a private hive-site.xml), yet no command line showed it
    assert lock_runs.password_seen_on == []
