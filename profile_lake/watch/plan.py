"""When `profile-lake watch` runs: which landing files wait, when a run is due, how long a failed
run waits for its retry, what a stop signal does. Pure: no clock, no file system, no dbt."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# A landing file as the ingest sees it (profile_lake.ingest.staging's glob): `*.jsonl` or
# `*.jsonl.gz` in a stream's folder; a hidden name is a file still being written.
LANDING_SUFFIXES = (".jsonl", ".jsonl.gz")

# file relative to the landing folder (`records/part-00001.jsonl`) -> (size, mtime in ns)
Listing = Mapping[str, tuple[int, int]]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|h)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_duration(text: str) -> float:
    """Seconds of `90`, `90s`, `1.5m`, `2h`, `500ms`; ValueError for anything else."""
    match = _DURATION.match(text)
    if not match:
        raise ValueError(f"not a duration: {text!r} (examples: 30s, 5m, 1h, 0.5)")
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2)]


def is_landing_file(name: str) -> bool:
    return not name.startswith((".", "_")) and name.endswith(LANDING_SUFFIXES)


def waiting_files(handed: Listing, current: Listing) -> list[str]:
    """The files of `current` that no run has started from yet: landed (or changed) since
    `handed`, the listing the last successful run started from."""
    return sorted(name for name, stat in current.items() if handed.get(name) != stat)


def first_seen(
    earlier: Mapping[str, float], waiting: Iterable[str], now: float
) -> dict[str, float]:
    """When each waiting file was first seen waiting (`now` for a new one); files no longer
    waiting are forgotten."""
    return {name: earlier.get(name, now) for name in waiting}


@dataclass(frozen=True)
class Schedule:
    """`poll_seconds`: how often the landing folder is listed. `min_interval_seconds`: the
    least time from one run's start to the next's. `every_seconds`: also run this long after
    the last run started when nothing landed (None: only when files land). A failed run is
    retried after `min_interval_seconds`, then twice as long each time it fails again, up to
    `max_retry_seconds`."""

    poll_seconds: float = 5.0
    min_interval_seconds: float = 30.0
    every_seconds: float | None = None
    max_retry_seconds: float = 900.0

    def problems(self) -> list[str]:
        found = []
        if self.poll_seconds <= 0:
            found.append("--poll must be more than 0 seconds")
        if self.min_interval_seconds < 0:
            found.append("--min-interval must be 0 seconds or more")
        if self.every_seconds is not None and self.every_seconds < 0:
            found.append("--every must be 0 seconds or more")
        return found


@dataclass(frozen=True)
class LoopState:
    """What the watcher knows of its runs: how many, when the last started and ended
    (monotonic seconds), how many failed in a row."""

    runs: int = 0
    last_start: float | None = None
    last_end: float | None = None
    consecutive_failures: int = 0

    def after_run(self, started: float, ended: float, success: bool) -> LoopState:
        return LoopState(
            runs=self.runs + 1,
            last_start=started,
            last_end=ended,
            consecutive_failures=0 if success else self.consecutive_failures + 1,
        )


def retry_delay(schedule: Schedule, failures: int) -> float:
    """Seconds from the end of a failed run to its retry: the minimum interval (at least a
    poll), doubling with each failure in a row, up to max_retry_seconds."""
    if failures <= 0:
        return 0.0
    base = max(schedule.min_interval_seconds, schedule.poll_seconds)
    return min(base * 2 ** min(failures - 1, 30), max(schedule.max_retry_seconds, base))


def due_reason(schedule: Schedule, state: LoopState, now: float, files_waiting: int) -> str | None:
    """Why a run starts now (`start`, `retry`, `new files`, `schedule`), None when none is due.

    The first run starts at once (files may have landed while no watcher ran). After a failed
    run only its retry is due, when retry_delay has passed (with or without new files: the
    failed run's work is still to do). Otherwise a run is due once min_interval_seconds have
    passed since the last one started, when files wait, or when every_seconds have passed."""
    if state.last_start is None or state.last_end is None:
        return "start"
    if state.consecutive_failures:
        if now - state.last_end >= retry_delay(schedule, state.consecutive_failures):
            return "retry"
        return None
    since_start = now - state.last_start
    if since_start < schedule.min_interval_seconds:
        return None
    if files_waiting:
        return "new files"
    if schedule.every_seconds is not None and since_start >= schedule.every_seconds:
        return "schedule"
    return None


def seconds_to_wait(schedule: Schedule, state: LoopState, now: float, files_waiting: int) -> float:
    """How long the watcher sleeps before it looks again: a poll, or less when a run falls due
    sooner (a retry, the minimum interval with files waiting, the `every` schedule)."""
    if state.last_start is None or state.last_end is None:
        return 0.0
    wait = schedule.poll_seconds
    if state.consecutive_failures:
        due = state.last_end + retry_delay(schedule, state.consecutive_failures)
        wait = min(wait, due - now)
    else:
        if files_waiting:
            wait = min(wait, state.last_start + schedule.min_interval_seconds - now)
        if schedule.every_seconds is not None:
            every = max(schedule.every_seconds, schedule.min_interval_seconds)
            wait = min(wait, state.last_start + every - now)
    return max(0.0, wait)


# What a stop signal (SIGTERM, SIGINT) does, by how many have come and whether a run is in
# flight: the first lets the run in flight finish, then the watcher stops (at once when idle);
# the second abandons the run (safe: it is a killed run, which the next run completes); a
# third ends the process without waiting for anything.
FINISH_THEN_STOP = "finish"
STOP = "stop"
ABANDON = "abandon"
EXIT_NOW = "exit"


def signal_action(signals: int, run_in_flight: bool) -> str:
    if signals <= 1:
        return FINISH_THEN_STOP if run_in_flight else STOP
    if signals == 2 and run_in_flight:
        return ABANDON
    return EXIT_NOW


# Errors after which this process's Spark session is unusable (its JVM is gone): every later
# run would fail the same way, so the watcher ends (exit 1) for its supervisor to start anew.
SESSION_LOST_MARKERS = (
    "Py4JNetworkError",
    "Answer from Java side is empty",
    "Error while sending or receiving",
    "Cannot call methods on a stopped SparkContext",
    "SparkContext was shut down",
    "Java gateway process exited",
)


def session_lost(message: str) -> bool:
    return any(marker in message for marker in SESSION_LOST_MARKERS)


# dbt's exceptions for arguments it refuses: every later run would refuse them again.
USAGE_ERRORS = ("DbtUsageException", "UsageError", "BadOptionUsage", "NoSuchOption")


def usage_error(exception: BaseException | None) -> bool:
    return exception is not None and type(exception).__name__ in USAGE_ERRORS


# dbt build options a watcher cannot pass: every run would rebuild every table from scratch.
REFUSED_DBT_OPTIONS = ("--full-refresh", "-f")
# dbt's unit tests check the project's code, which a watcher's runs do not change: CI runs
# them (docs/settings.md). A watcher given its own resource types keeps those.
LEFT_OUT_RESOURCE_TYPES = ("--exclude-resource-type", "unit_test")
RESOURCE_TYPE_OPTIONS = ("--resource-type", "--exclude-resource-type")


def dbt_build_args(
    select: Iterable[str],
    exclude: Iterable[str],
    variables: str | None,
    target: str | None,
    extra: Iterable[str],
) -> list[str]:
    """The `dbt build` arguments of every run (project and profiles folders apart).
    ValueError for an option a watch cannot repeat run after run."""
    extra = list(extra)
    refused = [option for option in extra if option.split("=", 1)[0] in REFUSED_DBT_OPTIONS]
    if refused:
        raise ValueError(
            f"{refused[0]}: a watcher would rebuild every table on every run; run "
            "`dbt build --full-refresh` once by hand (with the watcher stopped), then watch"
        )
    args = ["build"]
    if not any(option.split("=", 1)[0] in RESOURCE_TYPE_OPTIONS for option in extra):
        args += LEFT_OUT_RESOURCE_TYPES
    select, exclude = list(select), list(exclude)
    if select:
        args += ["--select", *select]
    if exclude:
        args += ["--exclude", *exclude]
    if variables:
        args += ["--vars", variables]
    if target:
        args += ["--target", target]
    return [*args, *extra]
