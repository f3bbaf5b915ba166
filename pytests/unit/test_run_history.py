"""The run history's rules: dead runs, a run's status, rows written from the Delta log."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from profile_lake.run_history import (
    HISTORY_MAX_FILES,
    MESSAGE_MAX_CHARS,
    WATCH_COMMAND,
    NodeResult,
    OpenRun,
    RunSummary,
    StreamLines,
    event_rank_sql,
    history_needs_compaction,
    killed_runs,
    latest_events,
    lines_maps,
    node_row,
    recent_commits,
    recorded_command,
    remember_run_summary,
    rows_written,
    run_status,
    run_summary,
    short_message,
    table_log_dir,
    take_run_summary,
)

NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


def open_run(run_id: str, host: str, pid: int, hours_ago: float) -> OpenRun:
    return OpenRun(run_id, host, pid, "1234", NOW - timedelta(hours=hours_ago))


def test_a_run_whose_process_is_gone_from_this_host_was_killed() -> None:
    runs = [open_run("dead", "here", 10, 0.1), open_run("alive", "here", 11, 0.1)]
    dead = killed_runs(runs, NOW, "here", lambda pid, _: pid == 11, timedelta(hours=24))
    assert [(run.run_id, "process 10 on here" in why) for run, why in dead] == [("dead", True)]


def test_a_run_of_another_host_is_killed_only_once_open_too_long() -> None:
    runs = [open_run("recent", "there", 10, 2), open_run("old", "there", 11, 30)]
    # the other host's processes cannot be seen: never asked
    dead = killed_runs(runs, NOW, "here", lambda *_: 1 / 0, timedelta(hours=24))
    assert [run.run_id for run, _ in dead] == ["old"]
    assert "on there" in dead[0][1]


def test_run_status_is_error_when_a_node_failed() -> None:
    assert run_status(["success", "pass", "warn", "skipped"]) == "success"
    assert run_status([]) == "success"
    for failed in ("error", "fail", "runtime error"):
        assert run_status(["success", failed]) == "error"


def commit_file(log: Path, version: int, commit: dict) -> None:
    actions = [{"protocol": {}}, {"commitInfo": commit}, {"add": {"path": "x"}}]
    (log / f"{version:020d}.json").write_text("\n".join(json.dumps(a) for a in actions))


def test_rows_written_sums_the_metrics_of_the_commits_in_the_nodes_window(tmp_path) -> None:
    log = table_log_dir(f"file:{tmp_path}", "lake", "records")
    assert log == tmp_path / "lake.db" / "records" / "_delta_log"
    log.mkdir(parents=True)
    started = NOW
    millis = int(started.timestamp() * 1000)
    commit_file(log, 0, {"timestamp": millis - 60_000, "operationMetrics": {"numOutputRows": "7"}})
    merge = {"numTargetRowsInserted": "3", "numTargetRowsUpdated": "2", "numTargetRowsDeleted": "1"}
    commit_file(log, 1, {"timestamp": millis + 500, "operationMetrics": merge})
    commit_file(log, 2, {"timestamp": millis + 900, "operationMetrics": {"numOutputRows": "4"}})
    (log / "00000000000000000002.checkpoint.parquet").write_text("not a commit")
    commits = recent_commits(log)
    assert [commit["timestamp"] - millis for commit in commits] == [-60_000, 500, 900]
    assert rows_written(commits, started, started + timedelta(seconds=1)) == 10
    # no commit in the window: not reported (a view, or nothing written), not 0
    later = started + timedelta(minutes=5)
    assert rows_written(commits, later, later + timedelta(seconds=1)) is None
    assert recent_commits(tmp_path / "missing") == []
    assert len(recent_commits(log, limit=1)) == 1


def test_node_row_names_the_node_and_shortens_its_message() -> None:
    node = NodeResult(
        "test.profile_lake.not_null_records_tenant_id.5d3a", "not_null_records_tenant_id",
        "test", "error", 1.23456, NOW, NOW, None, "x" * 5000, "lake", "records",
    )  # fmt: skip
    row = node_row("run-1", node, 12)
    assert row["node_name"] == "not_null_records_tenant_id"  # dbt's name, not the id's end
    assert row["seconds"] == 1.235
    assert row["rows_affected"] == 12
    assert len(row["message"]) == MESSAGE_MAX_CHARS
    assert short_message(None) is None


def test_lines_maps_have_every_stream() -> None:
    maps = lines_maps({"records": StreamLines(10, 8, 2)})
    assert maps["lines_landed"] == {
        "records": 10,
        "id_mutations": 0,
        "entity_names": 0,
        "erasures": 0,
    }
    assert maps["lines_accepted"]["records"] == 8
    assert maps["lines_quarantined"]["records"] == 2


def test_latest_events_give_one_row_per_run_by_its_highest_ranked_event() -> None:
    def event(run_id: str, kind: str, status: str, hours_ago: float) -> dict:
        return {
            "run_id": run_id,
            "event": kind,
            "status": status,
            "started_at": NOW - timedelta(hours=hours_ago),
        }

    events = [
        event("a", "started", "running", 3),
        event("a", "ended", "success", 3),
        event("b", "started", "running", 2),
        event("b", "killed", "killed", 2),
        event("c", "ended", "error", 1),  # ended after a later run thought it killed
        event("c", "killed", "killed", 1),
        event("c", "started", "running", 1),
        event("d", "started", "running", 0),
    ]
    runs = latest_events(events)
    assert [(run["run_id"], run["status"]) for run in runs] == [
        ("d", "running"),
        ("c", "error"),
        ("b", "killed"),
        ("a", "success"),
    ]


def test_the_views_rank_expression_ranks_as_latest_events_does() -> None:
    """The `run_history` view orders a run's events by event_rank_sql (through the adapter):
    evaluated as SQL, it puts the events in EVENT_RANK's order."""
    events = ["ended", "started", "killed"]
    database = sqlite3.connect(":memory:")
    database.execute("create table run_events (event text)")
    database.executemany("insert into run_events values (?)", [(event,) for event in events])
    ranked = database.execute(
        f"select event from run_events order by {event_rank_sql('event')} desc"
    ).fetchall()
    by_python = latest_events(
        {"run_id": "r", "event": event, "started_at": NOW} for event in events
    )
    assert [event for (event,) in ranked] == ["ended", "killed", "started"]
    assert by_python[0]["event"] == ranked[0][0]


def test_watch_builds_are_recorded_as_profile_lake_watch() -> None:
    assert recorded_command("dbt build", "watch") == WATCH_COMMAND
    assert recorded_command("dbt build", None) == "dbt build"
    assert recorded_command("dbt test", "watch") == "dbt test"  # only the watcher's builds


def test_a_run_summary_counts_files_lines_and_the_tables_committed_to() -> None:
    ended = {
        "run_id": "r1",
        "status": "success",
        "files_ingested": 2,
        "lines_landed": {"records": 900, "id_mutations": 60, "entity_names": 40},
        "seconds": 14.2,
    }
    nodes = [
        {"node_name": "records", "resource_type": "model", "rows_affected": 12},
        {"node_name": "tenant_lag", "resource_type": "model", "rows_affected": 0},
        {"node_name": "profiles", "resource_type": "model", "rows_affected": None},  # skipped
        {"node_name": "not_null_x", "resource_type": "test", "rows_affected": 3},
        {"node_name": "tenants", "resource_type": "seed", "rows_affected": 5},
    ]
    summary = run_summary(ended, nodes)
    assert summary == RunSummary(
        "r1", "success", 2, 1000, ("records", "tenant_lag", "tenants"), 14.2
    )
    remember_run_summary(summary)
    assert take_run_summary() == summary
    assert take_run_summary() is None


def test_a_history_table_is_compacted_once_it_holds_enough_files() -> None:
    assert not history_needs_compaction(None)  # not known (a warehouse off this machine)
    assert not history_needs_compaction(HISTORY_MAX_FILES - 1)
    assert history_needs_compaction(HISTORY_MAX_FILES)
