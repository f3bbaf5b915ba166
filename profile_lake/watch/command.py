"""`profile-lake watch`: one process, one Spark session, `dbt build` run in it as files land.

    profile-lake watch [--poll 5s] [--min-interval 30s] [--every 15m] [--max-runs N]
                       [--select ...] [--exclude ...] [--vars ...] [--target ...]
                       [-- more dbt build options]

The watcher lists the landing folder (PROFILE_LAKE_LANDING) every poll and runs the same
`dbt build` a scheduler would, in this process through dbt's programmatic runner
(dbtRunner): the first run starts at once, the next when files land (at least the minimum
interval after the last run started), or on the `--every` schedule. The Spark session, the
JVM and the Python workers outlive the runs; each run still parses the project (partially),
runs the hooks (run history, the exactly-once ingest, the locks) and skips what did not move.

It prints one line per run (profile_lake.watch.progress), keeps its status file for the
report (profile_lake.watch.status), survives a failed run (its line says why; the retry
waits longer each time), and stops cleanly on SIGTERM or SIGINT: the run in flight finishes
first; a second signal abandons it (a killed run, which the next run completes); a third
ends the process at once. Its runs are recorded in the run history as `profile-lake watch`.

On an embedded Derby metastore the watcher holds the lake for its whole life
(profile_lake.locks.process_lock): any other dbt or Spark process on the lake is told who
holds it.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from profile_lake.ingest.lines import STREAMS
from profile_lake.locks.process import process_alive, process_started
from profile_lake.locks.process_lock import lake_busy
from profile_lake.project import PROJECT_DIR, project_var
from profile_lake.watch.plan import (
    ABANDON,
    EXIT_NOW,
    FINISH_THEN_STOP,
    Listing,
    LoopState,
    Schedule,
    dbt_build_args,
    due_reason,
    first_seen,
    is_landing_file,
    parse_duration,
    retry_delay,
    seconds_to_wait,
    session_lost,
    signal_action,
    usage_error,
    waiting_files,
)
from profile_lake.watch.progress import (
    RunLine,
    descendants,
    describe_failure,
    failure_line,
    progress_line,
    stat_parent,
    vm_rss_mb,
)
from profile_lake.watch.status import iso, status_dir, status_path, write_status

DESCRIPTION = __doc__
# After a second stop signal the run is abandoned; should the process then hang on its way
# out (a Spark call that does not return), it ends this many seconds later regardless.
ABANDON_GRACE_SECONDS = 30.0
JVM_NAME = "java"
# The exit code asking a supervisor for a new process (EX_TEMPFAIL): the Python code the
# watcher imported changed on disk, and only a new process runs the new code.
EXIT_RESTART = 75
# how often an idle watcher asks whether a purge is due
PURGE_CHECK_SECONDS = 60.0


def add_watch_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--poll", default="5s", metavar="DURATION", help="list the landing folder this often")
    add(
        "--min-interval",
        default="30s",
        metavar="DURATION",
        help="least time from a run's start to the next run's start",
    )
    add(
        "--every",
        default=None,
        metavar="DURATION",
        help="also run this long after the last run started when nothing landed (default: "
        "only when files land)",
    )
    add("--max-runs", type=int, default=None, metavar="N", help="stop after N runs")
    add("-s", "--select", nargs="+", action="extend", default=[], help="as for dbt build")
    add("--exclude", nargs="+", action="extend", default=[], help="as for dbt build")
    add("--vars", default=None, help="as for dbt build (YAML)")
    add("-t", "--target", default=None, help="as for dbt build (default: the profile's)")
    add("--verbose", action="store_true", help="print dbt's log lines too (default: errors)")
    add("dbt_args", nargs="*", metavar="-- DBT_OPTION", help="more dbt build options, after --")


@dataclass(frozen=True)
class WatchOptions:
    schedule: Schedule
    build_args: tuple[str, ...]
    target: str | None
    max_runs: int | None
    verbose: bool
    # dbt var erasure_purge_hours, as --vars or dbt_project.yml set it
    erasure_purge_hours: float = 168.0

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> WatchOptions:
        """The options, checked; ValueError naming what to change."""
        every = None if args.every is None else parse_duration(args.every)
        schedule = Schedule(parse_duration(args.poll), parse_duration(args.min_interval), every)
        problems = schedule.problems()
        if args.max_runs is not None and args.max_runs < 1:
            problems.append("--max-runs must be 1 or more")
        if problems:
            raise ValueError("; ".join(problems))
        build = dbt_build_args(args.select, args.exclude, args.vars, args.target, args.dbt_args)
        return cls(
            schedule,
            tuple(build),
            args.target,
            args.max_runs,
            args.verbose,
            purge_horizon_hours(args.vars),
        )


def purge_horizon_hours(build_vars: str | None) -> float:
    """The dbt var erasure_purge_hours of the watcher's runs: --vars, else dbt_project.yml."""
    import yaml

    given = yaml.safe_load(build_vars) if build_vars else None
    if isinstance(given, dict) and "erasure_purge_hours" in given:
        return float(given["erasure_purge_hours"])
    return float(project_var("erasure_purge_hours"))  # type: ignore[arg-type]


def say(text: str) -> None:
    print(f"{datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ} watch: {text}", flush=True)


# ---------- the landing folder


def list_landing(landing: Path) -> Listing:
    """Every landing file of the streams, with its size and modification time."""
    listing: dict[str, tuple[int, int]] = {}
    for stream in STREAMS:
        try:
            entries = list(os.scandir(landing / stream))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            if not is_landing_file(entry.name):
                continue
            try:
                stat = entry.stat()
            except FileNotFoundError:  # renamed away meanwhile
                continue
            listing[f"{stream}/{entry.name}"] = (stat.st_size, stat.st_mtime_ns)
    return listing


# ---------- the watcher's own code


def code_stamp(roots: tuple[Path, ...]) -> frozenset[tuple[str, int, int]]:
    """(path, size, mtime) of every Python file under `roots`: the code this process imported
    once and keeps running (the project's SQL and YAML dbt reads afresh at every run)."""
    stamp = set()
    for root in roots:
        for path in root.rglob("*.py"):
            try:
                stat = path.stat()
            except FileNotFoundError:
                continue
            stamp.add((str(path), stat.st_size, stat.st_mtime_ns))
    return frozenset(stamp)


def code_roots() -> tuple[Path, ...]:
    """The project's package and the adapter plugin: the Python code a run executes."""
    import importlib.util

    roots = [PROJECT_DIR / "profile_lake"]
    spec = importlib.util.find_spec("dbt.adapters.profile_lake_spark")
    if spec is not None and spec.origin:
        roots.append(Path(spec.origin).parent)
    return tuple(roots)


# ---------- memory, from /proc


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read()
    except OSError:
        return ""


def process_memory(pid: int | None = None) -> tuple[int | None, int | None]:
    """(this process's resident MB, its JVM children's resident MB, None without one)."""
    pid = os.getpid() if pid is None else pid
    own = vm_rss_mb(_read(f"/proc/{pid}/status"))
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        text = _read(f"/proc/{entry}/stat")
        if not text:
            continue
        try:
            parents[int(entry)], names[int(entry)] = stat_parent(text)
        except (ValueError, IndexError):
            continue
    jvms = [child for child in descendants(parents, pid) if names.get(child) == JVM_NAME]
    sizes = [vm_rss_mb(_read(f"/proc/{child}/status")) for child in jvms]
    known = [size for size in sizes if size is not None]
    return own, (sum(known) if known else None)


# ---------- signals


class Stopper:
    """The watcher's SIGTERM and SIGINT handling (plan.signal_action)."""

    def __init__(self, abandon_grace_seconds: float | None = ABANDON_GRACE_SECONDS) -> None:
        self.signals = 0
        self.run_in_flight = False
        self.abandoned_by: int | None = None
        self.requested = threading.Event()
        self.abandon_grace_seconds = abandon_grace_seconds

    def install(self) -> None:
        """(Again after each run: pyspark puts its own SIGINT handler in when the session
        starts, which cancels every job at the first Ctrl-C.)"""
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._handle)

    def _handle(self, signum: int, frame: Any) -> None:
        self.signals += 1
        action = signal_action(self.signals, self.run_in_flight)
        name = signal.Signals(signum).name
        self.requested.set()
        if action == FINISH_THEN_STOP:
            say(f"{name}: stopping after the run in flight (send it again to abandon the run)")
        elif action == ABANDON:
            say(f"{name}: abandoning the run in flight (the next run completes its work)")
            self.abandoned_by = signum
            if self.abandon_grace_seconds is not None:
                timer = threading.Timer(self.abandon_grace_seconds, os._exit, [128 + signum])
                timer.daemon = True
                timer.start()
            raise KeyboardInterrupt
        elif action == EXIT_NOW:
            say(f"{name}: exiting now")
            os._exit(128 + signum)
        else:
            say(f"{name}: stopping")

    def wait(self, seconds: float) -> None:
        self.requested.wait(seconds)


# ---------- the watcher


@dataclass
class Watcher:
    options: WatchOptions
    landing: Path
    home: Path
    schema: str
    project_dir: Path
    profiles_dir: Path
    stopper: Stopper = field(default_factory=Stopper)
    state: LoopState = field(default_factory=LoopState)
    handed: Listing = field(default_factory=dict)
    waiting_since: dict[str, float] = field(default_factory=dict)
    last_run: dict[str, Any] | None = None
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    # how a run is invoked: dbt's programmatic runner (a stand-in in the unit tests)
    invoke: Callable[[list[str]], Any] | None = None
    # the Python code whose change on disk ends the watcher (EXIT_RESTART), as it was at start
    code: tuple[Path, ...] = ()
    code_at_start: frozenset[tuple[str, int, int]] = frozenset()
    # monotonic time of the next look at whether a purge is due
    next_purge_check: float = 0.0

    @property
    def status_file(self) -> Path:
        return status_path(self.home, self.schema, socket.gethostname(), os.getpid())

    def dbt_args(self) -> list[str]:
        args = list(self.options.build_args)
        if "--project-dir" not in args:
            args += ["--project-dir", str(self.project_dir)]
        if "--profiles-dir" not in args:
            args += ["--profiles-dir", str(self.profiles_dir)]
        if not self.options.verbose:
            args.append("--quiet")
        return args

    def write_status(self, state: str, waiting: list[str], **extra: Any) -> None:
        oldest = min((self.waiting_since[name] for name in waiting), default=None)
        schedule = self.options.schedule
        status = {
            "pid": os.getpid(),
            "process_started": process_started(os.getpid()),
            "host": socket.gethostname(),
            "schema": self.schema,
            "landing": str(self.landing),
            "dbt_args": list(self.options.build_args),
            "started_at": iso(self.started_at),
            "updated_at": iso(datetime.now(UTC)),
            "state": state,
            "poll_seconds": schedule.poll_seconds,
            "min_interval_seconds": schedule.min_interval_seconds,
            "every_seconds": schedule.every_seconds,
            "runs": self.state.runs,
            "consecutive_failures": self.state.consecutive_failures,
            "files_waiting": len(waiting),
            "oldest_waiting_since": iso(
                None if oldest is None else datetime.fromtimestamp(oldest, UTC)
            ),
            "last_run": self.last_run,
            **extra,
        }
        try:
            write_status(self.status_file, status)
        except OSError as error:  # the report loses a view; the pipeline does not stop
            say(f"status file not written ({error})")

    def remove_dead_statuses(self) -> None:
        """The status files of this host's watchers that are gone: superseded by this one."""
        host = socket.gethostname()
        folder = status_dir(self.home, self.schema)
        if not folder.is_dir():
            return
        for path in folder.glob(f"{host}-*.json"):
            try:
                pid = int(path.stem.rsplit("-", 1)[1])
            except ValueError:
                continue
            if pid != os.getpid() and not process_alive(pid, ""):
                path.unlink(missing_ok=True)

    def look(self) -> tuple[Listing, list[str]]:
        try:
            listing = list_landing(self.landing)
        except OSError as error:
            say(f"landing folder {self.landing} not listed ({error}); trying again")
            listing = dict(self.handed)
        waiting = waiting_files(self.handed, listing)
        self.waiting_since = first_seen(self.waiting_since, waiting, time.time())
        return listing, waiting

    def run(self) -> int:
        """Watch until stopped; the process's exit code."""
        self.stopper.install()
        self.remove_dead_statuses()
        self.code_at_start = code_stamp(self.code)
        schedule = self.options.schedule
        every = "" if schedule.every_seconds is None else f", every {schedule.every_seconds:g} s"
        say(
            f"watching {self.landing} (poll {schedule.poll_seconds:g} s, runs at least "
            f"{schedule.min_interval_seconds:g} s apart{every}): dbt "
            f"{' '.join(self.options.build_args)}; pid {os.getpid()}"
        )
        code = 0
        try:
            code = self._loop()
        except KeyboardInterrupt:  # a second signal between two runs
            code = 128 + (self.stopper.abandoned_by or signal.SIGINT)
        _, waiting = self.look()
        self.write_status("stopped", waiting, stopped_at=iso(datetime.now(UTC)))
        say(f"stopped after {self.state.runs} runs (exit {code})")
        return code

    def _loop(self) -> int:
        schedule = self.options.schedule
        while not self.stopper.requested.is_set():
            if code_stamp(self.code) != self.code_at_start:
                say(
                    "the Python code changed on disk since this process started: ending for a "
                    f"new process to run it (exit {EXIT_RESTART})"
                )
                return EXIT_RESTART
            listing, waiting = self.look()
            now = time.monotonic()
            reason = due_reason(schedule, self.state, now, len(waiting))
            if reason is None:
                self.write_status("idle", waiting)
                self._purge_when_due(now)
                self.stopper.wait(seconds_to_wait(schedule, self.state, now, len(waiting)))
                continue
            code = self._run_once(listing, reason)
            if code is not None:
                return code
            if self.options.max_runs is not None and self.state.runs >= self.options.max_runs:
                say(f"{self.state.runs} runs done (--max-runs)")
                return 0
        return 0

    def _purge_when_due(self, now: float) -> None:
        """Between runs, purge the lake when a purge is due (docs/erasure.md), so it does not
        wait for a file to land; asked at most once a minute. A run's end asks too."""
        from profile_lake.erasure.due import purge_due, read_purge_state

        if now < self.next_purge_check:
            return
        self.next_purge_check = now + PURGE_CHECK_SECONDS
        state = read_purge_state(self.home, self.schema)
        if not purge_due(state, self.options.erasure_purge_hours, datetime.now(UTC)):
            return
        say("erasure: a purge is due (var erasure_purge_hours): purging the lake")
        result = self._invoke(self.purge_args())
        say("erasure: purge " + ("done" if result.success else f"failed ({result.exception})"))

    def purge_args(self) -> list[str]:
        """`dbt run-operation purge_history` for the watched project and target."""
        args = ["run-operation", "purge_history"]
        if self.options.target:
            args += ["--target", self.options.target]
        args += ["--project-dir", str(self.project_dir), "--profiles-dir", str(self.profiles_dir)]
        return args if self.options.verbose else [*args, "--quiet"]

    def _invoke(self, args: list[str]) -> Any:
        if self.invoke is not None:
            return self.invoke(args)
        from dbt.cli.main import dbtRunner

        return dbtRunner().invoke(args)

    def _run_once(self, listing: Listing, reason: str) -> int | None:
        """One `dbt build`; an exit code when the watcher must end, else None."""
        from profile_lake.run_history import take_run_summary

        number = self.state.runs + 1
        started_at = datetime.now(UTC)
        started = time.monotonic()
        take_run_summary()  # an earlier run's, if it was left
        self.write_status("running", [], run_started_at=iso(started_at), run=number)
        self.stopper.run_in_flight = True
        try:
            result = self._invoke(self.dbt_args())
        finally:
            self.stopper.run_in_flight = False
            self.stopper.install()
        ended = time.monotonic()
        summary = take_run_summary()
        abandoned = self.stopper.abandoned_by is not None
        interrupted = isinstance(result.exception, KeyboardInterrupt)
        success = bool(result.success) and not interrupted
        status = "abandoned" if (abandoned or interrupted) else ("success" if success else "error")
        rss, jvm = process_memory()
        line = RunLine(
            at=datetime.now(UTC),
            run=number,
            status=status,
            seconds=ended - started,
            reason=reason,
            files=summary.files_ingested if summary else None,
            lines=summary.lines_landed if summary else None,
            tables_changed=summary.tables_changed if summary else None,
            rss_mb=rss,
            jvm_mb=jvm,
        )
        print(progress_line(line), flush=True)
        self.state = self.state.after_run(started, ended, success)
        message = None if success else describe_failure(result.exception, failed_nodes(result))
        self.last_run = {
            "run": number,
            "run_id": summary.run_id if summary else None,
            "status": status,
            "reason": reason,
            "started_at": iso(started_at),
            "ended_at": iso(line.at),
            "seconds": round(line.seconds, 1),
            "files": line.files,
            "lines": line.lines,
            "tables_changed": line.tables_changed,
            "rss_mb": rss,
            "jvm_mb": jvm,
            "message": message,
        }
        if abandoned or interrupted:
            return 128 + (self.stopper.abandoned_by or signal.SIGINT)
        if success:
            self.handed = listing
            return None
        delay = retry_delay(self.options.schedule, self.state.consecutive_failures)
        print(failure_line(line.at, number, message or "", delay), flush=True)
        if usage_error(result.exception):
            say("dbt refuses these build arguments: ending (every run would refuse them)")
            return 2
        if session_lost(message or ""):
            say("the Spark session is gone: ending for the supervisor to start a new process")
            return 1
        if lake_busy(message or ""):
            say("another process holds the lake: ending (retrying would only repeat this)")
            return 1
        return None


def failed_nodes(result: Any) -> list[tuple[str, str, str]]:
    """(name, status, message) of the invocation's nodes that failed."""
    outcome = getattr(result, "result", None)
    failed = []
    for item in getattr(outcome, "results", None) or []:
        status = str(getattr(item.status, "value", item.status))
        if status in ("error", "fail", "runtime error"):
            failed.append((item.node.name, status, str(item.message or "")))
    return failed


def hold_lake_first(target: str | None, profiles_dir: Path) -> None:
    """Hold the lake before the first run (embedded Derby): a busy lake stops the watcher at
    once, before dbt parses anything. Only for the committed profile, whose settings are known
    here; with another, the adapter holds the lake at the first run's connection."""
    from profile_lake.locks.process_lock import hold_session_lake
    from profile_lake.spark.session import PROFILES_DIR, session_settings

    if profiles_dir.resolve() != PROFILES_DIR.resolve():
        return
    try:
        settings = session_settings(target or os.environ.get("PROFILE_LAKE_TARGET", "local"))
    except Exception:  # the first run's dbt says what is wrong with the profile
        return
    hold_session_lake(settings, progress=say)


def run_watch(
    args: argparse.Namespace, hold_lake: Callable[[str | None, Path], None] = hold_lake_first
) -> int:
    from profile_lake.locks.process_lock import LakeBusyError, WaitSettingError
    from profile_lake.run_history import RUN_ORIGIN_ENV, WATCH_ORIGIN

    try:
        options = WatchOptions.from_args(args)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    project_dir = Path(os.environ.get("DBT_PROJECT_DIR") or PROJECT_DIR)
    profiles_dir = Path(os.environ.get("DBT_PROFILES_DIR") or PROJECT_DIR / "profiles")
    try:
        hold_lake(options.target, profiles_dir)
    except (LakeBusyError, WaitSettingError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    # the run history records this process's builds as `profile-lake watch`
    os.environ[RUN_ORIGIN_ENV] = WATCH_ORIGIN
    watcher = Watcher(
        options=options,
        landing=Path(os.environ.get("PROFILE_LAKE_LANDING", "sample/landing")),
        home=Path(os.environ.get("PROFILE_LAKE_HOME", ".lake")),
        schema=os.environ.get("PROFILE_LAKE_SCHEMA", "profile_lake"),
        project_dir=project_dir,
        profiles_dir=profiles_dir,
        code=code_roots(),
    )
    return watcher.run()
