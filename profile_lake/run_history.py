"""Run history: what each dbt invocation on the lake did, as rows (no Spark here).

A run writes a `started` event when it starts (on-run-start) and an `ended` event with one row
per node when it ends (on-run-end), both appends to Delta tables of the control schema, so runs
never conflict over them. A run killed in between leaves a `started` event alone: the next run
on the lake finds it and appends a `killed` event (`killed_runs`). The `run_history` view shows
each run's latest event. The Spark side is profile_lake.spark.run_history.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from profile_lake.delta_log import local_warehouse, managed_table_path
from profile_lake.ingest.lines import STREAMS

# A process running dbt for `profile-lake watch` says so in its environment: its builds are
# recorded under WATCH_COMMAND instead of `dbt build`. An environment variable, not a dbt var:
# vars are part of every node's fingerprint (run_state), and a watch run and a `dbt build`
# must skip the same nodes.
RUN_ORIGIN_ENV = "PROFILE_LAKE_RUN_ORIGIN"
WATCH_ORIGIN = "watch"
WATCH_COMMAND = "profile-lake watch"
# dbt's node statuses that make a run's status `error` (a test failing at severity error is
# `fail`; at warn it is `warn`)
FAILED_NODE_STATUSES = frozenset({"error", "fail", "runtime error"})
MESSAGE_MAX_CHARS = 1000
# Delta commitInfo.operationMetrics that count rows written, by operation
_ROW_METRICS = (
    "numOutputRows",  # WRITE, CREATE / REPLACE TABLE AS SELECT
    "numTargetRowsInserted",  # MERGE
    "numTargetRowsUpdated",
    "numTargetRowsDeleted",
    "numDeletedRows",  # DELETE
    "numUpdatedRows",  # UPDATE
)


@dataclass(frozen=True)
class OpenRun:
    """A run with a `started` event and neither `ended` nor `killed` yet."""

    run_id: str
    host: str
    pid: int
    process_started: str
    started_at: datetime


def killed_runs(
    open_runs: Iterable[OpenRun],
    now: datetime,
    host: str,
    process_alive: Callable[[int, str], bool],
    stale_after: timedelta,
) -> list[tuple[OpenRun, str]]:
    """The open runs that are dead, with why: on this host, when their process is gone (or its
    pid now belongs to another process); on another host, once they have been open for longer
    than `stale_after` (no run lasts that long)."""
    dead = []
    for run in open_runs:
        if run.host == host:
            if not process_alive(run.pid, run.process_started):
                dead.append((run, f"process {run.pid} on {host} ended without ending the run"))
        elif now - run.started_at > stale_after:
            dead.append((run, f"open since {run.started_at:%Y-%m-%d %H:%M:%S} UTC on {run.host}"))
    return dead


def recorded_command(dbt_command: str, origin: str | None) -> str:
    """The command a run is recorded under: `profile-lake watch` for the builds of a watching
    process (RUN_ORIGIN_ENV), else the dbt command (`dbt build`, `dbt test`, ...)."""
    if origin == WATCH_ORIGIN and dbt_command == "dbt build":
        return WATCH_COMMAND
    return dbt_command


def run_status(node_statuses: Iterable[str]) -> str:
    """`error` when a node failed (an error, a failing test of severity error), else `success`."""
    return "error" if any(status in FAILED_NODE_STATUSES for status in node_statuses) else "success"


def table_log_dir(warehouse_dir: str, schema: str, identifier: str) -> Path:
    """The _delta_log folder of a managed table of the session's warehouse."""
    warehouse = local_warehouse(warehouse_dir) or Path(warehouse_dir)
    return managed_table_path(warehouse, schema, identifier) / "_delta_log"


# The history tables take two or three small appends a run. Each one stays a file of its own
# until the table holds this many, when the run compacts the table (one OPTIMIZE), so reading
# the history stays a read of a few files. Delta's auto-compaction is not used: it compacts a
# table at the first write of every new process (its counts of small files live in the JVM), a
# rewrite of the whole history at every run from the shell.
HISTORY_MAX_FILES = 32


def history_needs_compaction(file_count: int | None) -> bool:
    """Whether a history table of `file_count` live files (None: not known) is compacted now."""
    return file_count is not None and file_count >= HISTORY_MAX_FILES


def recent_commits(log_dir: Path, limit: int = 20) -> list[dict[str, Any]]:
    """The commitInfo actions of the table's latest `limit` commits (newest last); none when
    the log is not a local folder."""
    if not log_dir.is_dir():
        return []
    files = sorted(log_dir.glob("[0-9]" * 20 + ".json"))[-limit:]
    commits = []
    for file in files:
        try:
            text = file.read_text()
        except OSError:  # removed by log clean-up meanwhile
            continue
        for line in text.splitlines():
            if '"commitInfo"' in line:
                commits.append(json.loads(line)["commitInfo"])
                break
    return commits


def rows_written(
    commits: Iterable[Mapping[str, Any]], started: datetime, completed: datetime
) -> int | None:
    """Rows the commits made between `started` and `completed` wrote (inserted, updated or
    deleted), from Delta's operation metrics; None when no commit falls in that window."""
    low = started.timestamp() * 1000 - 1000
    high = completed.timestamp() * 1000 + 1000
    total: int | None = None
    for commit in commits:
        if not low <= commit.get("timestamp", 0) <= high:
            continue
        metrics = commit.get("operationMetrics") or {}
        total = (total or 0) + sum(int(metrics.get(name, 0) or 0) for name in _ROW_METRICS)
    return total


def short_message(message: str | None) -> str | None:
    if message is None:
        return None
    message = str(message).strip()
    if len(message) <= MESSAGE_MAX_CHARS:
        return message
    return message[: MESSAGE_MAX_CHARS - 1] + "…"


@dataclass(frozen=True)
class NodeResult:
    """One node of a run, as dbt reports it in on-run-end's `results`."""

    unique_id: str
    name: str
    resource_type: str
    status: str
    seconds: float
    started_at: datetime | None
    completed_at: datetime | None
    failures: int | None
    message: str | None
    schema: str | None
    identifier: str | None


def node_row(run_id: str, node: NodeResult, rows_affected: int | None) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "unique_id": node.unique_id,
        "node_name": node.name,
        "resource_type": node.resource_type,
        "status": node.status,
        "message": short_message(node.message),
        "rows_affected": rows_affected,
        "failures": node.failures,
        "seconds": round(float(node.seconds), 3),
        "started_at": node.started_at,
        "completed_at": node.completed_at,
    }


def writes_table(node: NodeResult) -> bool:
    return node.resource_type in ("model", "seed", "snapshot") and bool(node.identifier)


@dataclass(frozen=True)
class StreamLines:
    """Lines of one stream staged by a run's ingest batches, and how many of them the staging
    model has accepted and quarantined so far."""

    landed: int
    accepted: int
    quarantined: int


def lines_maps(per_stream: Mapping[str, StreamLines]) -> dict[str, dict[str, int]]:
    """The run row's three maps (lines_landed, lines_accepted, lines_quarantined), keyed by
    stream, every stream present (0 when the run staged none of it)."""
    empty = StreamLines(0, 0, 0)
    return {
        "lines_landed": {s: per_stream.get(s, empty).landed for s in STREAMS},
        "lines_accepted": {s: per_stream.get(s, empty).accepted for s in STREAMS},
        "lines_quarantined": {s: per_stream.get(s, empty).quarantined for s in STREAMS},
    }


# which of a run's events tells its state: `ended` over `killed` (a run thought dead that
# ended after all), and either over `started`; the `run_history` view ranks by event_rank_sql
EVENT_RANK = {"started": 0, "killed": 1, "ended": 2}


def event_rank_sql(column: str) -> str:
    """EVENT_RANK as a SQL expression over the event `column` (the `run_history` view's
    order), through the adapter method run_event_rank_sql."""
    ranks = " ".join(f"when '{event}' then {rank}" for event, rank in EVENT_RANK.items())
    return f"case {column} {ranks} end"


def latest_events(events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per run, as the `run_history` view gives it: its highest-ranked event (each
    event carries the whole row), newest run first."""
    runs: dict[str, Mapping[str, Any]] = {}
    for event in events:
        kept = runs.get(event["run_id"])
        if kept is None or EVENT_RANK[event["event"]] > EVENT_RANK[kept["event"]]:
            runs[event["run_id"]] = event
    return sorted((dict(run) for run in runs.values()), key=lambda row: row["started_at"])[::-1]


def last_run_nodes(nodes: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The `run_nodes` rows of the last run that recorded any: the run of the latest
    `completed_at` (a node that never completed counts as earliest)."""
    rows = list(nodes)
    if not rows:
        return []

    def completed(row: Mapping[str, Any]) -> tuple[bool, Any]:
        return (row.get("completed_at") is not None, row.get("completed_at"))

    last = max(rows, key=completed)
    return [row for row in rows if row["run_id"] == last["run_id"]]


@dataclass(frozen=True)
class RunSummary:
    """What one run did, for `profile-lake watch`'s progress line: taken from the run's
    `ended` event and node rows as the run history writes them."""

    run_id: str
    status: str
    files_ingested: int
    lines_landed: int
    tables_changed: tuple[str, ...]
    seconds: float


def run_summary(ended: Mapping[str, Any], node_rows: Iterable[Mapping[str, Any]]) -> RunSummary:
    """A run's summary: files its ingest staged, lines they held (every stream), and the
    tables its models, seeds and snapshots committed to (a node with `rows_affected`)."""
    changed = sorted(
        {
            str(row["node_name"])
            for row in node_rows
            if row.get("resource_type") in ("model", "seed", "snapshot")
            and row.get("rows_affected") is not None
        }
    )
    return RunSummary(
        run_id=str(ended["run_id"]),
        status=str(ended["status"]),
        files_ingested=int(ended.get("files_ingested") or 0),
        lines_landed=sum(int(n or 0) for n in (ended.get("lines_landed") or {}).values()),
        tables_changed=tuple(changed),
        seconds=float(ended.get("seconds") or 0.0),
    )


# The summary of this process's latest recorded run: dbt runs in-process under
# `profile-lake watch`, which reads it after each invocation (take_run_summary).
_latest_summary: list[RunSummary] = []


def remember_run_summary(summary: RunSummary) -> None:
    _latest_summary[:] = [summary]


def take_run_summary() -> RunSummary | None:
    """The summary of the run recorded since the last call, if any (then forgotten)."""
    summary = _latest_summary[0] if _latest_summary else None
    _latest_summary.clear()
    return summary
