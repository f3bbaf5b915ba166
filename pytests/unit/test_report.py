"""The report page: what each chart draws for known data, and that the page is self-contained."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from profile_lake.charts import Series, bar_chart, line_chart, nice_max
from profile_lake.report import (
    LakeData,
    build_report,
    erasure_rows,
    last_run_techniques,
    report_charts,
    size_buckets,
    watcher_rows,
)
from profile_lake.run_history import WATCH_COMMAND
from pytests.support.watch_status import watcher_status

START = datetime(2026, 11, 20, 8, 0, tzinfo=UTC)
NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)  # the watcher's tests


def run_events(run_id: str, hour: int, status: str, **ended: object) -> list[dict]:
    started = {
        "run_id": run_id,
        "event": "started",
        "command": "dbt build",
        "tenants": "all",
        "status": "running",
        "started_at": START + timedelta(hours=hour),
    }
    if status == "running":
        return [started]
    kind = "killed" if status == "killed" else "ended"
    return [started, {**started, "event": kind, "status": status, **ended}]


def sample_data() -> LakeData:
    lines = {"records": 90, "id_mutations": 5, "entity_names": 5}
    events = [
        *run_events(
            "r1", 0, "success", seconds=100.0, files_ingested=3, lines_accepted=lines,
            lines_quarantined={"records": 4}, lag_minutes={"acme": 10.0, "globex": 30.0},
        ),
        *run_events("r2", 1, "killed"),
        *run_events(
            "r3", 2, "error", seconds=140.0, files_ingested=0, lines_accepted={},
            lines_quarantined={}, lag_minutes={"acme": 12.5},
        ),
        *run_events(
            "r4", 3, "success", seconds=120.0, files_ingested=1, lines_accepted=lines,
            lines_quarantined={"records": 1}, lag_minutes={"acme": 5.0, "globex": 1.0},
        ),
        *run_events("r5", 4, "running"),
    ]  # fmt: skip
    said = {
        "r1": "OK; technique keys: forced by var mart_technique",
        "r4": "OK; technique tenants: most bytes are new; the tenant its inputs wrote (acme)",
    }
    nodes = [
        {
            "run_id": run,
            "node_name": name,
            "resource_type": kind,
            "seconds": seconds,
            "message": said.get(run, "OK") if name == "profiles" else "OK",
            "completed_at": START + timedelta(hours=hour, minutes=2),
        }
        for run, hour in (("r1", 0), ("r3", 2), ("r4", 3))
        for name, kind, seconds in (
            ("records", "model", 30.0),
            ("profiles", "model", 20.0),
            ("not_null_records_tenant_id", "test", 50.0),
        )
    ] + [{"run_id": "r2", "node_name": "records", "resource_type": "model", "seconds": 9.0}]
    return LakeData(
        schema="lake",
        run_events=events,
        run_nodes=nodes,
        error_counts=[
            {"error_code": "invalid_json", "tenant_id": "acme", "problems": 3},
            {"error_code": "invalid_json", "tenant_id": "globex", "problems": 1},
            {"error_code": "unknown_tenant", "tenant_id": "~unreadable", "problems": 2},
        ],
        graph_health=[
            {"tenant_id": "acme", "profiles_by_identity_count": [(1, 50), (2, 7), (40, 1)]},
            {"tenant_id": "globex", "profiles_by_identity_count": [(1, 10), (3, 2)]},
        ],
        top_identities=[
            {
                "tenant_id": "acme",
                "identity_id": "email:test@x.test",
                "linked_identities": 39,
                "record_count": 40,
            },
            {
                "tenant_id": "acme",
                "identity_id": "email:a@x.test",
                "linked_identities": 1,
                "record_count": 1,
            },
            {
                "tenant_id": "globex",
                "identity_id": "crm:1",
                "linked_identities": 0,
                "record_count": 1,
            },
        ],
    )


def test_each_chart_draws_one_mark_per_value() -> None:
    marks = {chart.chart_id: chart.marks for chart in report_charts(sample_data())}
    assert marks == {
        # ended runs r1, r3, r4 (not the killed or the running one); lags: 2 + 1 + 2
        "lag": 5,
        # runs that ingested files (r1, r4): accepted and quarantined each
        "lines": 4,
        # (code, tenant) pairs
        "error_codes": 3,
        # one bar per ended run
        "run_seconds": 3,
        # models over the ended runs (the test left out, the killed run's node too)
        "node_seconds": 6,
        # buckets 1, 2, 3-4, 5-8, 9-16, 17-32, 33-64
        "profile_sizes": 7,
        # identities linking at least one other
        "top_identities": 2,
    }


def test_size_buckets_double_up_to_the_largest_profile() -> None:
    assert size_buckets({1: 50, 2: 7, 3: 2, 40: 1}) == (
        ["1", "2", "3-4", "5-8", "9-16", "17-32", "33-64"],
        [50, 7, 2, 0, 0, 0, 1],
    )
    assert size_buckets({}) == ([], [])


def test_the_page_is_self_contained_with_titles_units_and_captions() -> None:
    html = build_report(sample_data(), START)
    assert not re.search(r"<script|<link|<img|\ssrc=|\shref=|@import|url\(", html)
    assert html.count("<svg") == 7
    assert html.count("<figcaption>") == 7
    for unit in ("lag (minutes)", "lines", "seconds", "problems found", "identities per profile"):
        assert unit in html
    # the recent runs table shows the killed and the running run too
    assert ">killed<" in html and ">running<" in html


def test_the_page_says_how_the_last_run_brought_each_mart_up_to_date() -> None:
    html = build_report(sample_data(), START)
    table = html.split('id="mart-techniques"', 1)[1].split("</table>", 1)[0]
    assert ">profiles<" in table and ">tenants<" in table
    assert "the tenant its inputs wrote (acme)" in table
    assert "forced by var mart_technique" not in table  # an earlier run's
    assert last_run_techniques([]) == []


def test_an_empty_lake_gives_a_page_saying_so() -> None:
    html = build_report(LakeData(schema="new"), START)
    assert html.count("nothing to show yet") == 7
    assert "data-mark" not in html


def test_nice_max_rounds_up_to_a_readable_axis_top() -> None:
    assert [nice_max(value) for value in (0, 0.3, 7, 11, 240, 1000)] == [1, 0.5, 10, 20, 250, 1000]


def test_charts_refuse_nothing_and_draw_zero_values() -> None:
    svg = bar_chart("c", "c", ["a", "b"], [Series("s", [0, None])], "x", "y")
    assert svg.count("data-mark") == 1
    svg = line_chart("c", "c", ["a", "b"], [Series("s", [None, 3.0])], "x", "y")
    assert svg.count("<circle") == 1
    with pytest.raises(ValueError, match="one series"):
        bar_chart("c", "c", ["a"], [Series("s", [1]), Series("t", [1])], "x", "y", log=True)


# ---------- the watcher


def status(**fields: object) -> dict:
    """A status file as read_lake gives it (with whether its process is alive)."""
    return watcher_status(**{"alive": True, **fields})


def watch_events(run_id: str, hour: int, status_: str, command: str = WATCH_COMMAND) -> list:
    started = {
        "run_id": run_id,
        "event": "started",
        "command": command,
        "tenants": "all",
        "status": "running",
        "started_at": NOW - timedelta(hours=hour),
    }
    ended = {**started, "event": "ended", "status": status_, "seconds": 12.0}
    return [started, {**ended, "files_ingested": 1, "lag_minutes": {"acme": 2.5, "globex": 0.0}}]


def test_the_report_says_when_the_watcher_ran_and_whether_it_keeps_up() -> None:
    events = [
        *watch_events("w1", 1, "success"),
        *watch_events("w2", 2, "error"),
        *watch_events("w3", 30, "success"),  # over a day ago
        *watch_events("b1", 0, "success", command="dbt build"),
    ]
    late = status(files_waiting=4, oldest_waiting_since="2026-05-01T11:00:00Z")
    page = build_report(LakeData(schema="lake", run_events=events, watchers=[late]), NOW)
    assert "<h2>Watcher</h2>" in page
    assert 'class="watch-behind">Not keeping up: pid 4242 on h1: 4 landed files waiting' in page
    assert "Last watch run started 2026-05-01T11:00:00Z, success." in page
    assert "2 watch runs in the last 24 hours, 1 failed or killed" in page
    assert "acme 2.5 min, globex 0 min" in page
    assert '<table id="watchers">' in page

    fine = build_report(LakeData(schema="lake", run_events=events, watchers=[status()]), NOW)
    assert 'class="watch-ok">Keeping up: every landed file is in a run.' in fine
    stopped = status(state="stopped", stopped_at="2026-05-01T11:30:00Z", alive=False)
    none = build_report(LakeData(schema="lake", run_events=events, watchers=[stopped]), NOW)
    assert 'class="watch-none">No watcher is running.' in none


def test_no_watcher_no_watch_section() -> None:
    events = watch_events("b1", 0, "success", command="dbt build")
    assert "<h2>Watcher</h2>" not in build_report(LakeData(schema="lake", run_events=events), NOW)
    history_only = build_report(
        LakeData(schema="lake", run_events=watch_events("w", 1, "success")), NOW
    )
    assert "No watcher is running. Last watch run started" in history_only
    assert '<table id="watchers">' not in history_only


def test_watchers_are_listed_latest_heard_from_first() -> None:
    rows = watcher_rows([status(pid=1, updated_at="2026-05-01T10:00:00Z"), status(pid=2)], NOW)
    assert [row["watcher"] for row in rows] == ["pid 2 on h1", "pid 1 on h1"]


def erasure_request(request_id: str, applied: datetime, purged: datetime | None) -> dict:
    # as read from Delta: naive UTC timestamps
    return {
        "tenant_id": "acme",
        "request_id": request_id,
        "requested_ts": applied.replace(tzinfo=None),
        "applied_at": applied.replace(tzinfo=None),
        "purge_due_at": (applied + timedelta(hours=168)).replace(tzinfo=None),
        "purged_at": purged.replace(tzinfo=None) if purged else None,
        "identities_erased": 3,
        "records_erased": 2,
        "landing_files": ["records/part-1.jsonl", "erasures/r.jsonl"],
    }


def test_the_report_counts_erasure_requests_and_warns_of_a_late_purge() -> None:
    now = datetime(2026, 12, 10, tzinfo=UTC)
    data = LakeData(
        schema="profile_lake",
        erasure_requests=[
            erasure_request("late", now - timedelta(hours=200), None),
            erasure_request("due", now - timedelta(hours=2), None),
            erasure_request("done", now - timedelta(hours=300), now - timedelta(hours=250)),
        ],
        requests_received=4,
    )
    page = build_report(data, now)
    assert "4 requests received, 3 applied, 1 purged." in page
    assert 'id="erasure-warning"' in page and "1 applied requests are past" in page
    states = {row["request_id"]: row["purge"] for row in erasure_rows(data.erasure_requests, now)}
    assert states == {"late": "late", "due": "due", "done": "done"}
    assert "records/part-1.jsonl, erasures/r.jsonl" in page


def test_no_erasure_request_no_erasure_section_and_no_warning_when_purged_in_time() -> None:
    now = datetime(2026, 12, 10, tzinfo=UTC)
    assert "Erasure requests" not in build_report(LakeData(schema="profile_lake"), now)
    purged = LakeData(
        schema="profile_lake",
        erasure_requests=[erasure_request("r", now - timedelta(hours=500), now)],
        requests_received=1,
    )
    page = build_report(purged, now)
    assert "Erasure requests" in page and "erasure-warning" not in page
