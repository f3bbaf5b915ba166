"""The report page: what each chart draws for known data, and that the page is self-contained."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from profile_lake.charts import Series, bar_chart, line_chart, nice_max
from profile_lake.report import LakeData, build_report, report_charts, size_buckets

START = datetime(2026, 11, 20, 8, 0, tzinfo=UTC)


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
    nodes = [
        {"run_id": run, "node_name": name, "resource_type": kind, "seconds": seconds}
        for run in ("r1", "r3", "r4")
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
