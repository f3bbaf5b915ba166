"""`profile-lake watch` on a lake of its own, with real landing files arriving.

One story, in `profile-lake watch` subprocesses (each its own process group: the watcher, its
JVM, its Python workers) on the `local` target, the way production runs it:

1. a watcher starts on a fresh lake whose landing folder holds a first wave of generated files,
   and builds it in its first run;
2. a second wave lands (each file under a hidden name, renamed into place, as producers do) and
   the next runs pick it up: every line landed is staged once, accepted or quarantined, and
   applied to `records`;
3. beside the watcher, a second `dbt build`, a `dbt show` and a second watcher each fail within
   seconds with the one message naming the holder (the embedded Derby metastore admits one
   process), where they used to die a minute in, in Derby's stack traces;
4. a third wave lands and the watcher is SIGKILLed (its whole process group, as if the machine
   died) as soon as the run in flight has staged it in a landing table, before the ingest's
   checkpoint commits the micro-batch; a new watcher finishes the work: nothing lost, nothing
   twice (the lines already staged are not staged again), and the run history shows the killed
   run;
5. a fourth wave lands and the watcher gets SIGTERM (the watcher alone, as systemd's
   KillMode=mixed sends it) while its run is in flight: the run finishes, the watcher exits 0;
6. a whole `dbt build` (every model and data test, on every row) passes on the lake: it builds
   the marts the watcher's selection leaves out over every wave at once.

Then the memory test: a watcher on the same lake runs MEMORY_RUNS builds in one process (new
files at two of them, nothing new at the others), and its progress lines stay within
profile_lake.watch.progress.MEMORY_BOUND.

The story's fixture reads what each step left as it goes (the lake moves on), and the tests
check what it read. The tables are read with `deltalake`: the watcher owns the metastore.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from profile_lake.delta_reader import read_delta
from profile_lake.generator.config import GeneratorConfig
from profile_lake.generator.core import generate
from profile_lake.ingest.lines import STREAMS
from profile_lake.report import write_report
from profile_lake.run_history import WATCH_COMMAND, latest_events
from profile_lake.watch.progress import (
    MEMORY_BOUND,
    memory_bound_breach,
    memory_size_mb,
    parse_progress_line,
)
from profile_lake.watch.status import read_statuses
from pytests.support.dbt_runner import PARTIAL_PARSE_FILE, PROJECT_DIR
from pytests.support.dbt_subprocess import DbtOutcome
from pytests.support.expected import expected_records, landing_lines
from pytests.support.subprocess_lake import KILLED, SubprocessLake
from pytests.support.subprocess_lake import POLL_SECONDS as KILL_POLL_SECONDS

pytestmark = pytest.mark.integration

SCHEMA = "watched"
# Runs as soon as files land (no minimum interval), listing the folder every second. The runs
# build what the story reads (the landing and records tables, accounting, lag), the way a
# watcher given a selection runs; the marts downstream and the data tests are left to the
# story's last `dbt build` (every model and data test, every row), which keeps the runs short.
RECORDS_PIPELINE = (
    *("--select", "+ingest_errors", "+ingest_file_accounting", "+record_notifications"),
    "+tenant_lag",
)
WATCH_OPTIONS = (
    *("--poll", "1s", "--min-interval", "0"),
    *RECORDS_PIPELINE,
    *("--exclude", "resource_type:test"),
)
# A fresh lake's first run starts the JVM and builds every model it selects; later runs are
# shorter.
FIRST_RUN_TIMEOUT_S = 1800.0  # guards against a hung run, not goals
RUN_TIMEOUT_S = 1200.0
# A second process on the lake stops before its JVM starts: what is left is dbt's own start and
# its (partial) parse, on 2 cores beside a running watcher. (It took a minute and more, and
# hundreds of lines of Derby's and Hive's traces, before the lake was held.)
SECOND_PROCESS_SECONDS = 60.0
# A second watcher stops before dbt parses anything.
SECOND_WATCHER_SECONDS = 30.0
DRIVER_MEMORY = "2g"  # DbtSubprocess's driver memory: the JVM's heap maximum
# 6 runs past the 3 of warm-up, new files at two of them: any leak of what a run holds (a
# manifest, a session view's cached rows, a DataFrame: tens of MB each) passes the bound's
# 128 MB within those runs (22 MB a run does); the watcher's memory is flat from its second
# run, so more runs only find slower leaks, at 10 to 20 s a run on two busy cores.
MEMORY_RUNS = 9
LAND_AT_RUNS = (4, 6)  # the memory test's runs after which a small wave lands
MEMORY_RUN_BUDGET_S = 60.0  # a run with nothing new, at most (the goal is 10 s)
POLL_SECONDS = 0.2
# The generator's events fall in the 60 days before their wave's ingest base: each wave
# updates, deletes and re-creates the records of the waves before it.
INGEST_BASES = (
    "2026-01-01T00:00:00Z",
    "2026-03-01T00:00:00Z",
    "2026-05-01T00:00:00Z",
    "2026-07-01T00:00:00Z",
    "2026-08-01T00:00:00Z",
    "2026-09-01T00:00:00Z",
)
(FIRST, SECOND, KILLED_WAVE, STOPPED_WAVE, MEMORY_A, MEMORY_B) = range(len(INGEST_BASES))


# ---------- landing waves


@dataclass(frozen=True)
class Waves:
    """Generated waves of landing files (paths relative to `root`) and their bad lines."""

    root: Path
    files: tuple[tuple[Path, ...], ...]
    bad: frozenset[tuple[str, int]]  # (file, line number) of every bad line of every wave

    def land(self, wave: int, landing: Path) -> None:
        """Land a wave as a producer does: each file written under a hidden name (which the
        watcher and the ingest ignore), then renamed into place."""
        for relative in self.files[wave]:
            target = landing / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            hidden = target.with_name(f".{target.name}.tmp")
            shutil.copyfile(self.root / relative, hidden)
            os.replace(hidden, target)


def _landing_files(root: Path) -> set[Path]:
    return {path.relative_to(root) for path in root.glob("*/*.jsonl*")}


@pytest.fixture(scope="module")
def waves(tmp_path_factory) -> Waves:
    root = tmp_path_factory.mktemp("watch-waves")
    files, bad = [], set()
    for base in INGEST_BASES:
        before = _landing_files(root)
        manifest = generate(
            GeneratorConfig(
                out=root,
                seed=53,
                tenants=2,
                records_per_tenant=20,
                renames_per_tenant=4,
                names_per_tenant=8,
                delete_rate=0.3,
                bad_rate=0.05,
                lines_per_file=60,
                gzip_every=3,
                ingest_base=base,
                quiet=True,
            )
        )
        files.append(tuple(sorted(_landing_files(root) - before)))
        bad |= {(entry["file"], entry["line"]) for entry in manifest["bad_lines"]}
    return Waves(root, tuple(files), frozenset(bad))


# ---------- a watcher subprocess


@dataclass
class Watch:
    """A `profile-lake watch` subprocess: its own process group, its output in a file."""

    process: subprocess.Popen[bytes]
    run_dir: Path
    started: float = field(default_factory=time.monotonic)

    @classmethod
    def start(cls, lake: SubprocessLake, *options: str) -> Watch:
        lake.dbt.runs_dir.mkdir(parents=True, exist_ok=True)
        run_dir = Path(tempfile.mkdtemp(prefix="watch-", dir=lake.dbt.runs_dir))
        command = [
            *watch_command(*options),
            "--",
            *("--target-path", str(run_dir / "target")),
            *("--log-path", str(run_dir / "logs")),
        ]
        with (run_dir / "output.log").open("wb") as output:
            process = subprocess.Popen(
                command,
                cwd=PROJECT_DIR,
                env=lake.dbt.environment(),
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return cls(process, run_dir)

    @property
    def pid(self) -> int:
        return self.process.pid

    def output(self) -> str:
        return (self.run_dir / "output.log").read_text(errors="replace")

    def tail(self, chars: int = 6000) -> str:
        return self.output()[-chars:]

    def runs(self) -> list[dict]:
        """The progress lines printed so far, parsed."""
        return [run for line in self.output().splitlines() if (run := parse_progress_line(line))]

    def wait_until(
        self,
        condition: Callable[[], bool],
        timeout: float,
        what: str,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if self.process.poll() is not None:
                raise AssertionError(
                    f"watch ended (exit {self.process.returncode}) before {what}\n{self.tail()}"
                )
            if time.monotonic() > deadline:
                raise AssertionError(f"no {what} within {timeout:.0f}s\n{self.tail()}")
            time.sleep(poll_seconds)

    def wait_for_runs(self, count: int, timeout: float = RUN_TIMEOUT_S) -> list[dict]:
        self.wait_until(lambda: len(self.runs()) >= count, timeout, f"run {count}")
        return self.runs()

    def signal(self, signum: int) -> None:
        """Signal the watcher alone (its JVM and workers get nothing, as under systemd's
        KillMode=mixed)."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signum)

    def kill_group(self) -> None:
        """SIGKILL the watcher, its JVM and its workers at once (as if the machine died)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)

    def wait(self, timeout: float = RUN_TIMEOUT_S) -> int:
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill_group()
            self.process.wait()
            raise AssertionError(
                f"watch did not end within {timeout:.0f}s\n{self.tail()}"
            ) from None

    @property
    def partial_parse(self) -> Path:
        return self.run_dir / "target" / PARTIAL_PARSE_FILE


def watch_command(*options: str) -> list[str]:
    """`profile-lake watch`, from this checkout (cwd: the project)."""
    return [sys.executable, "-m", "profile_lake.cli", "watch", *options]


# ---------- what the lake holds


@dataclass(frozen=True)
class Accounting:
    """The lake's account of the landing folder at one moment."""

    landed: Counter  # (file, line number) -> 1, every line of every landed file
    staged: Counter  # (file, line number) -> times it is in the landing tables
    files_accounted: dict[str, tuple[int, int, int]]  # file -> landed, accepted, quarantined
    lines_per_file: dict[str, int]
    not_applied: list[int]  # tenant_lag.staged_lines_not_applied
    records: dict[tuple[str, str], dict]
    expected_records: dict[tuple[str, str], dict]


def account(lake: SubprocessLake, landing: Path, bad: frozenset[tuple[str, int]]) -> Accounting:
    lines = {stream: landing_lines(landing, stream) for stream in STREAMS}
    landed = Counter(key for stream in STREAMS for key in lines[stream])
    staged: Counter = Counter()
    for stream in STREAMS:
        table = read_delta(lake.table_path(stream, "landing"), ["source_file", "line_number"])
        staged.update(
            zip(table["source_file"].to_pylist(), table["line_number"].to_pylist(), strict=True)
        )
    accounting = read_delta(lake.table_path("ingest_file_accounting")).to_pylist()
    lag = read_delta(lake.table_path("tenant_lag"), ["staged_lines_not_applied"])
    records = read_delta(lake.table_path("records"), ["tenant_id", "record_id", "payload"])
    messages = [
        json.loads(raw) for key, raw in lines["records"].items() if key not in bad and raw.strip()
    ]
    return Accounting(
        landed=landed,
        staged=staged,
        files_accounted={
            row["source_file"]: (
                row["lines_landed"],
                row["lines_accepted"],
                row["lines_quarantined"],
            )
            for row in accounting
        },
        lines_per_file=dict(Counter(file for file, _ in landed)),
        not_applied=lag["staged_lines_not_applied"].to_pylist(),
        records={
            (row["tenant_id"], row["record_id"]): json.loads(row["payload"])
            for row in records.to_pylist()
        },
        expected_records=expected_records(messages),
    )


def assert_nothing_lost(found: Accounting) -> None:
    """Every landed line staged exactly once, accepted or quarantined, applied to `records`."""
    assert found.staged == found.landed, "every landed line is staged exactly once"
    assert set(found.files_accounted) == set(found.lines_per_file), "every landed file counted"
    for file, (landed, accepted, quarantined) in found.files_accounted.items():
        assert landed == found.lines_per_file[file] == accepted + quarantined, file
    assert found.not_applied and set(found.not_applied) == {0}, found.not_applied
    assert found.records.keys() == found.expected_records.keys()
    assert found.records == found.expected_records


def files_in(runs: Sequence[dict]) -> int:
    return sum(run["files"] or 0 for run in runs)


# ---------- the story


@dataclass
class Story:
    lake: SubprocessLake
    first_watch: Watch
    first_runs: list[dict] = field(default_factory=list)  # after the first wave
    second_wave_runs: list[dict] = field(default_factory=list)
    after_second_wave: Accounting | None = None
    second_build: DbtOutcome | None = None
    second_show: DbtOutcome | None = None
    second_watcher: subprocess.CompletedProcess[str] | None = None
    second_watcher_seconds: float = 0.0
    runs_when_killed: tuple[int, int] = (0, 0)  # progress lines when the wave landed, killed
    # micro-batches the ingest's checkpoint had committed when the wave landed, and at the kill
    ingest_commits_when_killed: tuple[int, int] = (0, 0)
    killed_exit: int = 0
    restarted_watch: Watch | None = None
    restarted_runs: list[dict] = field(default_factory=list)
    after_restart: Accounting | None = None
    stopping_runs: list[dict] = field(default_factory=list)
    stopped_exit: int | None = None
    stopped_output: str = ""
    statuses: list[dict] = field(default_factory=list)  # the watchers' status files then
    final_build: DbtOutcome | None = None
    after_final_build: Accounting | None = None
    run_history: list[dict] = field(default_factory=list)
    report_html: str = ""


@pytest.fixture(scope="module")
def watched(waves: Waves, tmp_path_factory) -> Iterator[Story]:
    home = tmp_path_factory.mktemp("watch-lake")
    landing = home / "landing"
    lake = SubprocessLake(home, landing, SCHEMA)
    watches: list[Watch] = []

    def start(*options: str) -> Watch:
        watches.append(Watch.start(lake, *WATCH_OPTIONS, *options))
        return watches[-1]

    try:
        # 1. the first wave, built by the watcher's first run
        waves.land(FIRST, landing)
        first = start()
        story = Story(lake, first)
        story.first_runs = first.wait_for_runs(1, FIRST_RUN_TIMEOUT_S)
        assert story.first_runs[0]["status"] == "success", first.tail()

        # 2. the second wave lands; the next runs pick every file of it up
        before = len(first.runs())
        waves.land(SECOND, landing)
        wanted = len(waves.files[SECOND])
        first.wait_until(lambda: files_in(first.runs()[before:]) >= wanted, RUN_TIMEOUT_S, "wave 2")
        story.second_wave_runs = first.runs()[before:]
        story.after_second_wave = account(lake, landing, waves.bad)

        # 3. beside the watcher: a second dbt build, a dbt show, a second watcher
        if first.partial_parse.exists():  # dbt's start without a full parse
            shutil.copyfile(first.partial_parse, lake.dbt.partial_parse_cache)
        story.second_build = lake.dbt.run(["build"], expect_success=False, timeout=300)
        story.second_show = lake.dbt.run(
            ["show", "--inline", "select 1 as one"], expect_success=False, timeout=300
        )
        started = time.monotonic()
        story.second_watcher = subprocess.run(
            watch_command(*WATCH_OPTIONS),
            cwd=PROJECT_DIR,
            env=lake.dbt.environment(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        story.second_watcher_seconds = time.monotonic() - started

        # 4. the third wave lands; SIGKILL as soon as the run in flight has staged some of it
        runs_at_landing = len(first.runs())
        ingest_commits = lake.checkpoint_entries("commits")
        commits = lake.landing_commits()
        waves.land(KILLED_WAVE, landing)
        first.wait_until(
            lambda: lake.landing_commits() > commits,
            RUN_TIMEOUT_S,
            "wave 3 staged",
            poll_seconds=KILL_POLL_SECONDS,
        )
        first.kill_group()
        story.killed_exit = first.wait(60)
        story.runs_when_killed = (runs_at_landing, len(first.runs()))
        story.ingest_commits_when_killed = (ingest_commits, lake.checkpoint_entries("commits"))

        # a new watcher: its first run (at its start) finishes the killed run's work
        restarted = start()
        story.restarted_watch = restarted
        story.restarted_runs = restarted.wait_for_runs(1, FIRST_RUN_TIMEOUT_S)
        story.after_restart = account(lake, landing, waves.bad)

        # 5. the fourth wave lands; SIGTERM while the run that stages it is in flight
        before = len(restarted.runs())
        commits = lake.landing_commits()
        waves.land(STOPPED_WAVE, landing)
        restarted.wait_until(lambda: lake.landing_commits() > commits, RUN_TIMEOUT_S, "wave 4")
        restarted.signal(signal.SIGTERM)
        story.stopped_exit = restarted.wait(RUN_TIMEOUT_S)
        story.stopped_output = restarted.output()
        story.stopping_runs = restarted.runs()[before:]

        # 6. a whole dbt build, every model and data test on every row
        story.statuses = read_statuses(home, SCHEMA)
        story.final_build = lake.dbt.run(
            ["build", "--vars", "{full_checks: true}"], timeout=FIRST_RUN_TIMEOUT_S
        )
        story.after_final_build = account(lake, landing, waves.bad)
        story.run_history = latest_events(
            read_delta(lake.table_path("run_events", "control")).to_pylist()
        )
        report = write_report(home, SCHEMA, home / "report.html")
        story.report_html = report.read_text()
        yield story
    finally:
        for watch in watches:
            watch.kill_group()


def test_the_first_run_builds_the_lake_at_start(watched: Story) -> None:
    (first, *_) = watched.first_runs
    assert (first["run"], first["status"], first["reason"]) == (1, "success", "start")
    assert first["files"] and first["lines"] and first["tables"] > 4, first


def test_landed_files_reach_the_tables_in_the_next_runs(watched: Story, waves: Waves) -> None:
    runs = watched.second_wave_runs
    assert runs and all(run["status"] == "success" for run in runs), runs
    assert runs[0]["reason"] == "new files", runs
    assert files_in(runs) == len(waves.files[SECOND]), runs
    assert watched.after_second_wave is not None
    assert_nothing_lost(watched.after_second_wave)


def test_a_second_dbt_process_is_told_who_holds_the_lake(watched: Story) -> None:
    pid = watched.first_watch.pid
    for outcome in (watched.second_build, watched.second_show):
        assert outcome is not None and not outcome.success
        output = outcome.output()
        assert f"is in use by pid {pid} (profile-lake watch" in output, outcome.tail()
        assert "PROFILE_LAKE_WAIT_FOR_LAKE" in output and "`shared` target" in output
        for trace in ("SessionHiveMetaStoreClient", "XSDB6", "Traceback", "at org.apache"):
            assert trace not in output, outcome.tail()
        assert outcome.seconds < SECOND_PROCESS_SECONDS, outcome.describe()


def test_a_second_watcher_stops_at_once(watched: Story) -> None:
    refused = watched.second_watcher
    assert refused is not None and refused.returncode == 1, refused
    assert f"is in use by pid {watched.first_watch.pid} (profile-lake watch" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert watched.second_watcher_seconds < SECOND_WATCHER_SECONDS


def test_the_watcher_was_killed_between_staging_and_its_commit(watched: Story) -> None:
    """Inside a run, its ingest having staged the wave in a landing table and not yet
    committed the micro-batch to its checkpoint."""
    assert watched.killed_exit == KILLED
    landed_at, killed_at = watched.runs_when_killed
    assert killed_at == landed_at, "no run ended between the wave landing and the kill"
    before, at_kill = watched.ingest_commits_when_killed
    assert at_kill == before, watched.ingest_commits_when_killed


def test_nothing_is_lost_when_the_watcher_is_killed(watched: Story) -> None:
    (first, *_) = watched.restarted_runs
    assert (first["status"], first["reason"]) == ("success", "start"), first
    assert watched.after_restart is not None
    assert_nothing_lost(watched.after_restart)


def test_sigterm_lets_the_run_in_flight_finish(watched: Story, waves: Waves) -> None:
    assert watched.stopped_exit == 0, watched.stopped_output[-6000:]
    assert "SIGTERM: stopping after the run in flight" in watched.stopped_output
    runs = watched.stopping_runs
    assert runs and runs[-1]["status"] == "success" and files_in(runs) > 0, runs
    assert watched.stopped_output.rstrip().endswith("(exit 0)")
    (status,) = watched.statuses  # the killed watcher's was removed by the next one
    assert watched.restarted_watch is not None
    assert status["state"] == "stopped" and status["pid"] == watched.restarted_watch.pid


def test_a_whole_dbt_build_passes_after_the_watcher_stops(watched: Story) -> None:
    assert watched.final_build is not None and watched.final_build.success
    assert watched.after_final_build is not None
    assert_nothing_lost(watched.after_final_build)


def test_the_run_history_shows_the_watch_runs(watched: Story) -> None:
    runs = watched.run_history  # newest first
    watch_runs = [run for run in runs if run["command"] == WATCH_COMMAND]
    printed = len(watched.first_watch.runs()) + len(
        watched.restarted_watch.runs() if watched.restarted_watch else []
    )
    statuses = Counter(run["status"] for run in watch_runs)
    assert statuses == {"success": printed, "killed": 1}, statuses
    (killed,) = [run for run in watch_runs if run["status"] == "killed"]
    assert "ended without ending the run" in killed["message"]
    assert all(run["lag_minutes"] is not None for run in watch_runs if run["status"] == "success")
    assert runs[0]["command"] == "dbt build" and runs[0]["status"] == "success"
    # the refused dbt build never started a run
    assert [run["command"] for run in runs].count("dbt build") == 1


def test_the_report_says_the_watcher_stopped(watched: Story) -> None:
    html = watched.report_html
    assert "<h2>Watcher</h2>" in html
    assert 'class="watch-none">No watcher is running. Last watch run started' in html
    assert '<table id="watchers">' in html and "<td>stopped</td>" in html


# ---------- memory over many runs in one process (last: it moves the story's lake on)


def test_memory_stays_within_its_bound_over_many_runs(watched: Story, waves: Waves) -> None:
    """MEMORY_RUNS runs in one watcher, back to back (--every 0), of the staging models (each
    run still opens dbt, runs the run-start and run-end hooks that ingest and record it, and
    plans every node; the whole pipeline's runs are the story's): most find nothing new and
    skip every node (docs/run-state.md); a small wave lands after each of LAND_AT_RUNS and is
    staged. The progress lines' memory stays within MEMORY_BOUND."""
    lake = watched.lake
    watch = Watch.start(
        lake,
        *("--poll", f"{POLL_SECONDS}s", "--min-interval", "0", "--every", "0"),
        *("--max-runs", str(MEMORY_RUNS), "--exclude", "resource_type:test"),
        *("--select", "path:models/staging"),
    )
    try:
        for wave, after in zip((MEMORY_A, MEMORY_B), LAND_AT_RUNS, strict=True):
            watch.wait_for_runs(after, FIRST_RUN_TIMEOUT_S + MEMORY_RUN_BUDGET_S * after)
            waves.land(wave, lake.landing)
        exit_code = watch.wait(FIRST_RUN_TIMEOUT_S + MEMORY_RUN_BUDGET_S * MEMORY_RUNS)
    finally:
        watch.kill_group()
    runs = watch.runs()
    assert exit_code == 0, watch.tail()
    assert len(runs) == MEMORY_RUNS and all(run["status"] == "success" for run in runs), runs
    landed = [run for run in runs if run["files"]]
    assert sum(run["files"] for run in landed) == sum(
        len(waves.files[wave]) for wave in (MEMORY_A, MEMORY_B)
    ), landed
    breach = memory_bound_breach(
        [run["rss_mb"] for run in runs],
        [run["jvm_mb"] for run in runs],
        memory_size_mb(DRIVER_MEMORY),
    )
    figures = [(run["run"], run["rss_mb"], run["jvm_mb"], run["seconds"]) for run in runs]
    assert breach is None, f"{MEMORY_BOUND}: {breach}; (run, rss MB, jvm MB, s): {figures}"
