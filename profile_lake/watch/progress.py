"""The one line `profile-lake watch` prints per run, and the memory figures it carries.

A line reads (one line; the table names in brackets, at most TABLES_NAMED of them):

    2026-05-01T12:03:04Z watch run 3: success, 2 files, 1000 lines, 14.2 s, 5 tables changed
    [int_record_states, records, record_notifications, tenant_lag, +1 more], rss 412 MB,
    jvm 1630 MB (new files)

Files and lines are what the run's ingest staged, tables changed those its models, seeds and
snapshots committed rows to (from the run history, profile_lake.run_history.RunSummary; `?`
when the run recorded none: var run_history false, or a run that failed before its end).
`rss` is the watcher's own resident memory (Python: dbt, the adapter), `jvm` the Spark
driver's, both read from /proc after the run.

Memory bound (MEMORY_BOUND, checked by pytests/integration/test_watch.py over 9 runs): after
WARMUP_RUNS runs, the watcher's own memory grows by at most PYTHON_GROWTH_MB, and the driver
JVM stays under its heap maximum (spark.driver.memory) plus JVM_OVERHEAD_MB (metaspace, code
cache, thread stacks, Delta's and Parquet's native buffers). The JVM's heap grows up to its
maximum by design, so its bound is the configured size; the Python side has no such cap, so
its bound is growth.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

TABLES_NAMED = 4
# The watcher's own memory is flat from its second run on (dbt parsed, the adapter's caches
# filled); three runs leave a margin.
WARMUP_RUNS = 3
PYTHON_GROWTH_MB = 128
JVM_OVERHEAD_MB = 1024
MEMORY_BOUND = (
    f"after {WARMUP_RUNS} runs the watcher's own memory grows by at most {PYTHON_GROWTH_MB} MB, "
    f"and the driver JVM stays under spark.driver.memory + {JVM_OVERHEAD_MB} MB"
)


@dataclass(frozen=True)
class RunLine:
    """One run as its progress line tells it (None: not known)."""

    at: datetime
    run: int
    status: str
    seconds: float
    reason: str
    files: int | None = None
    lines: int | None = None
    tables_changed: tuple[str, ...] | None = None
    rss_mb: int | None = None
    jvm_mb: int | None = None


def _number(value: int | None) -> str:
    return "?" if value is None else str(value)


def progress_line(run: RunLine) -> str:
    if run.tables_changed is None:
        tables = "? tables changed"
    else:
        names = list(run.tables_changed[:TABLES_NAMED])
        if len(run.tables_changed) > TABLES_NAMED:
            names.append(f"+{len(run.tables_changed) - TABLES_NAMED} more")
        listed = f" [{', '.join(names)}]" if names else ""
        tables = f"{len(run.tables_changed)} tables changed{listed}"
    return (
        f"{run.at:%Y-%m-%dT%H:%M:%SZ} watch run {run.run}: {run.status}, "
        f"{_number(run.files)} files, {_number(run.lines)} lines, {run.seconds:.1f} s, {tables}, "
        f"rss {_number(run.rss_mb)} MB, jvm {_number(run.jvm_mb)} MB ({run.reason})"
    )


_LINE = re.compile(
    r"^(?P<at>\S+) watch run (?P<run>\d+): (?P<status>[a-z]+), "
    r"(?P<files>\d+|\?) files, (?P<lines>\d+|\?) lines, (?P<seconds>\d+(?:\.\d+)?) s, "
    r"(?P<tables>\d+|\?) tables changed(?: \[(?P<names>[^\]]*)\])?, "
    r"rss (?P<rss>\d+|\?) MB, jvm (?P<jvm>\d+|\?) MB \((?P<reason>[^)]*)\)$"
)


def parse_progress_line(line: str) -> dict[str, object] | None:
    """A progress line's fields (numbers as int or float, `?` as None); None for any other
    line. `tables` is the count, `names` the tables named."""
    match = _LINE.match(line.strip())
    if not match:
        return None
    found = match.groupdict()

    def count(key: str) -> int | None:
        return None if found[key] == "?" else int(str(found[key]))

    return {
        "at": found["at"],
        "run": int(found["run"]),
        "status": found["status"],
        "files": count("files"),
        "lines": count("lines"),
        "seconds": float(found["seconds"]),
        "tables": count("tables"),
        "names": [name for name in (found["names"] or "").split(", ") if name],
        "rss_mb": count("rss"),
        "jvm_mb": count("jvm"),
        "reason": found["reason"],
    }


def failure_line(at: datetime, run: int, message: str, retry_seconds: float) -> str:
    """The line after a failed run's progress line: why, and when it is tried again."""
    first = " ".join(message.split())[:500] or "no message"
    when = f"{at:%Y-%m-%dT%H:%M:%SZ}"
    return f"{when} watch run {run} failed: {first}; next try in {retry_seconds:.0f} s"


def describe_failure(exception: BaseException | None, nodes: Sequence[tuple[str, str, str]]) -> str:
    """A failed invocation in a sentence: dbt's exception, else its failed nodes (name, status,
    message)."""
    if exception is not None:
        return f"{type(exception).__name__}: {exception}".strip()
    failed = [(name, status, message) for name, status, message in nodes]
    if not failed:
        return "dbt build failed"
    shown = "; ".join(f"{name} ({status}): {message}" for name, status, message in failed[:3])
    more = f"; and {len(failed) - 3} more" if len(failed) > 3 else ""
    return f"{len(failed)} nodes failed: {shown}{more}"


# ---------- memory, from /proc


def vm_rss_mb(status_text: str) -> int | None:
    """VmRSS of a /proc/<pid>/status text, in MB (None when absent: a zombie, a kernel task)."""
    for line in status_text.splitlines():
        if line.startswith("VmRSS:"):
            fields = line.split()
            return int(fields[1]) // 1024 if len(fields) > 1 and fields[1].isdigit() else None
    return None


def stat_parent(stat_text: str) -> tuple[int, str]:
    """(parent pid, command name) of a /proc/<pid>/stat text (the name may hold spaces)."""
    head, _, rest = stat_text.rpartition(")")
    name = head.split("(", 1)[1] if "(" in head else ""
    return int(rest.split()[1]), name


def descendants(parents: Mapping[int, int], root: int) -> set[int]:
    """Every process below `root`, given each process's parent."""
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def memory_size_mb(text: str) -> int:
    """A JVM memory size (`6g`, `2048m`, `512k`, bytes) in MB, as spark.driver.memory reads."""
    match = re.fullmatch(r"\s*(\d+)\s*([kmgt]?)b?\s*", text.lower())
    if not match:
        raise ValueError(f"not a memory size: {text!r}")
    value, unit = int(match.group(1)), match.group(2)
    factor = {"": 1 / 1024 / 1024, "k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}[unit]
    return int(value * factor)


def memory_bound_breach(
    rss_mb: Sequence[int | None], jvm_mb: Sequence[int | None], heap_max_mb: int
) -> str | None:
    """Where a watcher's runs broke MEMORY_BOUND, None when they kept it. `rss_mb` and
    `jvm_mb` are the figures of its progress lines, run after run."""
    if len(rss_mb) <= WARMUP_RUNS:
        return f"{len(rss_mb)} runs: the bound is checked after {WARMUP_RUNS} runs"
    warm = rss_mb[WARMUP_RUNS - 1]
    later = [value for value in rss_mb[WARMUP_RUNS:] if value is not None]
    if warm is None or not later:
        return "the watcher's memory was not measured"
    if max(later) - warm > PYTHON_GROWTH_MB:
        run = WARMUP_RUNS + 1 + rss_mb[WARMUP_RUNS:].index(max(later))
        return (
            f"the watcher's memory grew from {warm} MB after run {WARMUP_RUNS} to {max(later)} MB "
            f"at run {run}: more than {PYTHON_GROWTH_MB} MB"
        )
    measured = [value for value in jvm_mb if value is not None]
    if measured and max(measured) > heap_max_mb + JVM_OVERHEAD_MB:
        return (
            f"the driver JVM reached {max(measured)} MB: over its heap maximum {heap_max_mb} MB "
            f"+ {JVM_OVERHEAD_MB} MB"
        )
    return None
