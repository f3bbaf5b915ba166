"""`profile-lake report`: one self-contained HTML page of how the lake is doing.

Reads the run history (`<schema>_control.run_events`, `run_nodes`), `ingest_errors` and the
identity-graph marts with the deltalake reader (no JVM), and the status files of
`profile-lake watch` (profile_lake.watch.status), and draws them as inline SVG
(profile_lake.charts): no script, no network, viewable offline. `build_report` is pure (data
in, HTML out); `read_lake` does the reading.
"""

from __future__ import annotations

import os
import socket
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any

from profile_lake.charts import Series, bar_chart, format_number, hbar_chart, line_chart
from profile_lake.run_history import WATCH_COMMAND, last_run_nodes, latest_events
from profile_lake.techniques import technique_said
from profile_lake.watch.status import iso, keeping_up, parse_iso

RUNS_SHOWN = 30
ERROR_CODES_SHOWN = 20
NODES_SHOWN = 6
IDENTITIES_SHOWN = 10
ENDED = ("success", "error")
STATUS_COLORS = {"success": "#2f6db5", "error": "#c23b3b"}


@dataclass(frozen=True)
class LakeData:
    """What the report shows, as plain rows."""

    schema: str
    run_events: list[dict[str, Any]] = field(default_factory=list)
    run_nodes: list[dict[str, Any]] = field(default_factory=list)
    error_counts: list[dict[str, Any]] = field(default_factory=list)  # code, tenant, problems
    graph_health: list[dict[str, Any]] = field(default_factory=list)
    top_identities: list[dict[str, Any]] = field(default_factory=list)
    # status files of `profile-lake watch` processes, each with `alive` (None: another host)
    watchers: list[dict[str, Any]] = field(default_factory=list)
    erasure_requests: list[dict[str, Any]] = field(default_factory=list)
    # accepted lines of the erasures/ stream, as (tenant_id, request_id)
    requests_received: int = 0


@dataclass(frozen=True)
class Chart:
    chart_id: str
    title: str
    look_for: str
    svg: str
    marks: int


def _table_dir(home: Path, schema: str, table: str) -> Path:
    return home / "warehouse" / f"{schema}.db" / table


MAP_COLUMNS = (
    "lines_landed",
    "lines_accepted",
    "lines_quarantined",
    "lag_minutes",
    "identities_by_namespace",
    "profiles_by_identity_count",
)


def _rows(table_dir: Path) -> list[dict[str, Any]]:
    """The table's rows, maps as dicts (Arrow gives lists of pairs); none before it exists."""
    from profile_lake.delta_reader import read_delta

    if not (table_dir / "_delta_log").is_dir():
        return []
    rows = read_delta(table_dir).to_pylist()
    for row in rows:
        for column in MAP_COLUMNS:
            if isinstance(row.get(column), list):
                row[column] = dict(row[column])
    return rows


def read_watchers(home: Path, schema: str) -> list[dict[str, Any]]:
    """The watchers' status files, each with whether its process still runs (this host's)."""
    from profile_lake.locks.process import process_alive
    from profile_lake.watch.status import read_statuses

    host = socket.gethostname()
    watchers = []
    for status in read_statuses(home, schema):
        alive = None
        if status.get("host") == host and str(status.get("pid", "")).isdigit():
            alive = process_alive(int(status["pid"]), str(status.get("process_started") or ""))
        watchers.append({**status, "alive": alive})
    return watchers


def read_lake(home: Path, schema: str) -> LakeData:
    """The report's data from the lake's Delta tables (a table not built yet gives none)."""
    from profile_lake.delta_reader import read_delta

    errors_dir = _table_dir(home, schema, "ingest_errors")
    error_counts: list[dict[str, Any]] = []
    if (errors_dir / "_delta_log").is_dir():
        errors = read_delta(errors_dir, ["error_code", "tenant_id"])
        counts = Counter(
            zip(
                errors.column("error_code").to_pylist(),
                errors.column("tenant_id").to_pylist(),
                strict=True,
            )
        )
        error_counts = [
            {"error_code": code, "tenant_id": tenant, "problems": problems}
            for (code, tenant), problems in sorted(counts.items())
        ]
    return LakeData(
        schema=schema,
        run_events=_rows(_table_dir(home, f"{schema}_control", "run_events")),
        run_nodes=_rows(_table_dir(home, f"{schema}_control", "run_nodes")),
        error_counts=error_counts,
        graph_health=_rows(_table_dir(home, schema, "identity_graph_health")),
        top_identities=_rows(_table_dir(home, schema, "identity_graph_top_identities")),
        watchers=read_watchers(home, schema),
        erasure_requests=_rows(_table_dir(home, schema, "erasure_requests")),
        requests_received=requests_received(home, schema),
    )


def requests_received(home: Path, schema: str) -> int:
    """Distinct requests among the accepted lines of the erasures/ stream."""
    from profile_lake.delta_reader import read_delta

    staged = _table_dir(home, f"{schema}_staging", "stg_erasures__requests")
    if not (staged / "_delta_log").is_dir():
        return 0
    rows = read_delta(staged, ["tenant_id", "request_id", "is_accepted"]).to_pylist()
    return len({(row["tenant_id"], row["request_id"]) for row in rows if row["is_accepted"]})


def _utc(moment: datetime | None) -> datetime | None:
    """A timestamp read from Delta (naive, UTC) as an aware one."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


def erasure_rows(requests: Sequence[Mapping[str, Any]], now: datetime) -> list[dict[str, Any]]:
    """The requests, newest first, with their age and whether their purge is late."""
    rows = []
    for request in requests:
        applied, due = _utc(request.get("applied_at")), _utc(request.get("purge_due_at"))
        purged = request.get("purged_at")
        late = purged is None and due is not None and due < now
        rows.append(
            {
                **request,
                "age_hours": round((now - applied).total_seconds() / 3600, 1) if applied else None,
                "purge": "late" if late else ("done" if purged else "due"),
                "landing_files": ", ".join(request.get("landing_files") or []),
            }
        )
    return sorted(rows, key=lambda row: str(row.get("applied_at")), reverse=True)


def erasure_section(data: LakeData, now: datetime) -> str:
    """Requests to erase a person: received, applied, purged, their age; a purge past its
    horizon is a warning (empty when the lake never had a request)."""
    if not data.requests_received and not data.erasure_requests:
        return ""
    rows = erasure_rows(data.erasure_requests, now)
    late = [row for row in rows if row["purge"] == "late"]
    purged = sum(row["purge"] == "done" for row in rows)
    headline = f"{data.requests_received} requests received, {len(rows)} applied, {purged} purged."
    warning = (
        f'<p id="erasure-warning" class="watch-behind">{len(late)} applied requests are past '
        "their purge horizon (var erasure_purge_hours): some file of the lake may still hold "
        "what they erased. Run <code>profile-lake purge</code> (docs/erasure.md).</p>"
        if late
        else ""
    )
    table = _table(
        "erasure-requests",
        [
            "tenant_id", "request_id", "requested_ts", "applied_at", "age_hours",
            "identities_erased", "records_erased", "purge", "purge_due_at", "purged_at",
            "landing_files",
        ],
        rows,
    )  # fmt: skip
    return (
        f'<h2>Erasure requests</h2><p id="erasure-headline">{escape(headline)}</p>{warning}'
        "<p>landing_files: files that still name the person; the lake never changes landing "
        f"files, so remove them.</p>{table}"
    )


def _run_label(run: Mapping[str, Any]) -> str:
    return f"{run['started_at']:%m-%d %H:%M}"


def ended_runs(events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The latest RUNS_SHOWN ended runs, oldest first."""
    runs = [run for run in latest_events(events) if run["status"] in ENDED]
    return runs[:RUNS_SHOWN][::-1]


def _chart(chart_id: str, title: str, look_for: str, svg: str) -> Chart:
    return Chart(chart_id, title, look_for, svg, svg.count("data-mark="))


def lag_chart(runs: Sequence[Mapping[str, Any]]) -> Chart:
    tenants = sorted({tenant for run in runs for tenant in run.get("lag_minutes") or {}})
    lines = [
        Series(tenant, [(run.get("lag_minutes") or {}).get(tenant) for run in runs])
        for tenant in tenants
    ]
    svg = line_chart(
        "lag",
        "Lag per tenant over recent runs",
        [_run_label(run) for run in runs],
        lines,
        "run start (UTC, month-day hour:minute)",
        "lag (minutes)",
    )
    return _chart(
        "lag",
        "Lag per tenant over recent runs",
        "How far records are behind what landed, per tenant, when each run ended. A line that "
        "keeps rising means the tenant is not keeping up; compare with its max_lag_minutes.",
        svg,
    )


def lines_chart(runs: Sequence[Mapping[str, Any]]) -> Chart:
    ingesting = [run for run in runs if run.get("files_ingested")]
    accepted = [sum((run.get("lines_accepted") or {}).values()) for run in ingesting]
    quarantined = [sum((run.get("lines_quarantined") or {}).values()) for run in ingesting]
    svg = bar_chart(
        "lines",
        "Lines accepted and quarantined per run",
        [_run_label(run) for run in ingesting],
        [Series("accepted", accepted), Series("quarantined", quarantined, "#d9822b")],
        "run start (UTC), runs that ingested files",
        "lines",
    )
    return _chart(
        "lines",
        "Lines accepted and quarantined per run",
        "Every stream's lines each run staged. A growing orange part means more bad input "
        "is arriving; the next chart says which tenant sends it and what is wrong with it.",
        svg,
    )


def errors_chart(error_counts: Sequence[Mapping[str, Any]]) -> Chart:
    totals: Counter[str] = Counter()
    for row in error_counts:
        totals[row["error_code"]] += row["problems"]
    codes = [code for code, _ in totals.most_common(ERROR_CODES_SHOWN)]
    tenants = sorted({row["tenant_id"] for row in error_counts if row["error_code"] in codes})
    by_pair = {(row["error_code"], row["tenant_id"]): row["problems"] for row in error_counts}
    stacks = [Series(tenant, [by_pair.get((code, tenant)) for code in codes]) for tenant in tenants]
    svg = hbar_chart(
        "error_codes", "Problems by error code and tenant", codes, stacks, "problems found"
    )
    return _chart(
        "error_codes",
        "Quarantined input by error code and tenant",
        "All problems in ingest_errors so far (a line may have several). One tenant "
        "dominating a code points at that tenant's producer; the codes are in ingest_errors' "
        "docs.",
        svg,
    )


def durations_chart(runs: Sequence[Mapping[str, Any]]) -> Chart:
    svg = bar_chart(
        "run_seconds",
        "Run duration",
        [_run_label(run) for run in runs],
        [
            Series(
                status,
                [run["seconds"] if run["status"] == status else None for run in runs],
                STATUS_COLORS[status],
            )
            for status in ENDED
        ],
        "run start (UTC)",
        "seconds",
    )
    return _chart(
        "run_seconds",
        "Run duration",
        "Wall-clock seconds of each run, red when it failed. A step up that stays is a run "
        "that got slower: the next chart shows which step.",
        svg,
    )


def node_chart(runs: Sequence[Mapping[str, Any]], nodes: Sequence[Mapping[str, Any]]) -> Chart:
    shown = {run["run_id"]: index for index, run in enumerate(runs)}
    seconds: dict[str, list[float | None]] = {}
    for node in nodes:
        writes = node["resource_type"] in ("model", "seed", "snapshot")
        if node["run_id"] not in shown or not writes:
            continue
        values = seconds.setdefault(node["node_name"], [None] * len(runs))
        values[shown[node["run_id"]]] = node["seconds"]
    slowest = sorted(seconds, key=lambda name: -max(v or 0 for v in seconds[name]))
    lines = [Series(name, seconds[name]) for name in slowest[:NODES_SHOWN]]
    svg = line_chart(
        "node_seconds",
        "Slowest steps over runs",
        [_run_label(run) for run in runs],
        lines,
        "run start (UTC)",
        "seconds",
    )
    return _chart(
        "node_seconds",
        "Slowest steps over runs",
        f"The {NODES_SHOWN} models, seeds or snapshots that took longest, per run. A line "
        "climbing from run to run is the step that got slower (run_node_history has them all).",
        svg,
    )


def size_buckets(sizes: Mapping[int, int]) -> tuple[list[str], list[int]]:
    """Profiles per size bucket (1, 2, 3-4, 5-8, ...: powers of two), up to the largest."""
    if not sizes:
        return [], []
    largest = max(sizes)
    labels, counts = [], []
    low = 1
    while low <= largest:
        high = max(low, 2 * low - 2) if low > 2 else low
        labels.append(str(low) if high == low else f"{low}-{high}")
        counts.append(sum(n for size, n in sizes.items() if low <= size <= high))
        low = high + 1
    return labels, counts


def sizes_chart(health: Sequence[Mapping[str, Any]]) -> Chart:
    sizes: Counter[int] = Counter()
    for tenant in health:
        for size, profiles in dict(tenant.get("profiles_by_identity_count") or {}).items():
            sizes[int(size)] += int(profiles)
    labels, counts = size_buckets(sizes)
    svg = bar_chart(
        "profile_sizes",
        "Profiles by size",
        labels,
        [Series("", counts)],
        "identities per profile",
        "profiles (log scale)",
        log=True,
    )
    return _chart(
        "profile_sizes",
        "Profile size distribution (all tenants)",
        "Most profiles hold a few identities. A bar far to the right, alone, is a profile "
        "that may have collapsed (a shared identity linking many people): see the table below.",
        svg,
    )


def top_identities_chart(top: Sequence[Mapping[str, Any]]) -> Chart:
    ranked = sorted(
        (row for row in top if row["linked_identities"]),
        key=lambda row: (-row["linked_identities"], -row["record_count"], row["identity_id"]),
    )[:IDENTITIES_SHOWN]
    svg = hbar_chart(
        "top_identities",
        "Most-connected identities",
        [f"{row['tenant_id']} · {row['identity_id']}" for row in ranked],
        [Series("linked identities", [row["linked_identities"] for row in ranked])],
        "identities linked directly (by live records)",
    )
    return _chart(
        "top_identities",
        "Most-connected identities",
        "Identities linked to the most others. A test email or a shared device linking "
        "hundreds is a candidate for an identity rule (blocked).",
        svg,
    )


def last_run_techniques(nodes: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The marts of the last recorded run (the latest run with node rows) and the technique
    each took, with why (profile_lake.techniques), by node name."""
    rows = []
    for row in last_run_nodes(nodes):
        said = technique_said(row.get("message"))
        if said is not None:
            rows.append({"node_name": row["node_name"], "technique": said[0], "why": said[1]})
    return sorted(rows, key=lambda row: row["node_name"])


def report_charts(data: LakeData) -> list[Chart]:
    runs = ended_runs(data.run_events)
    return [
        lag_chart(runs),
        lines_chart(runs),
        errors_chart(data.error_counts),
        durations_chart(runs),
        node_chart(runs, data.run_nodes),
        sizes_chart(data.graph_health),
        top_identities_chart(data.top_identities),
    ]


WATCH_RUNS_WINDOW_HOURS = 24


def watcher_rows(watchers: Sequence[Mapping[str, Any]], now: datetime) -> list[dict[str, Any]]:
    """One row per watcher, the latest heard from first: its state and whether it keeps up
    (profile_lake.watch.status.keeping_up)."""
    rows = []
    for status in watchers:
        verdict, why = keeping_up(status, now, status.get("alive"))
        last_run = status.get("last_run") or {}
        rows.append(
            {
                "watcher": f"pid {status.get('pid')} on {status.get('host')}",
                "state": status.get("state"),
                "since": status.get("started_at"),
                "last_seen": status.get("updated_at"),
                "last_run_ended": last_run.get("ended_at"),
                "last_run_status": last_run.get("status"),
                "files_waiting": status.get("files_waiting"),
                "keeping_up": {True: "yes", False: "no", None: ""}[verdict],
                "why": why,
                "_verdict": verdict,
            }
        )
    return sorted(rows, key=lambda row: str(row["last_seen"] or ""), reverse=True)


def watch_headline(
    rows: Sequence[Mapping[str, Any]], watch_runs: Sequence[Mapping[str, Any]]
) -> tuple[str, str]:
    """The watch section's first sentence and its class (ok, behind, none)."""
    judged = [row for row in rows if row["_verdict"] is not None]
    behind = [row for row in judged if row["_verdict"] is False]
    last = watch_runs[0] if watch_runs else None
    last_text = (
        f" Last watch run started {iso(last['started_at'])}, {last['status']}."
        if last and last.get("started_at")
        else ""
    )
    if behind:
        row = behind[0]
        return f"Not keeping up: {row['watcher']}: {row['why']}.{last_text}", "behind"
    if judged:
        return f"Keeping up: {judged[0]['why']}.{last_text}", "ok"
    if rows or last:
        return f"No watcher is running.{last_text}", "none"
    return "", "none"


def watch_section(data: LakeData, now: datetime) -> str:
    """When `profile-lake watch` last ran and whether it keeps up: its status files and its
    runs in the run history (empty when no watcher ever ran on the lake)."""
    runs = [run for run in latest_events(data.run_events) if run.get("command") == WATCH_COMMAND]
    rows = watcher_rows(data.watchers, now)
    headline, kind = watch_headline(rows, runs)
    if not headline:
        return ""
    since = now.timestamp() - WATCH_RUNS_WINDOW_HOURS * 3600
    recent = [
        run
        for run in runs
        if (started := parse_iso(run.get("started_at"))) and started.timestamp() >= since
    ]
    failed = sum(run["status"] in ("error", "killed") for run in recent)
    ended = next((run for run in runs if run.get("lag_minutes")), None)
    lag = (
        " Lag per tenant when the last of them ended: "
        + ", ".join(
            f"{escape(tenant)} {format_number(minutes)} min"
            for tenant, minutes in sorted(dict(ended["lag_minutes"]).items())
        )
        + "."
        if ended
        else ""
    )
    counts = (
        f"<p>{len(recent)} watch runs in the last {WATCH_RUNS_WINDOW_HOURS} hours, {failed} "
        f"failed or killed (run_history, command <code>profile-lake watch</code>).{lag}</p>"
    )
    table = _table(
        "watchers",
        [
            "watcher", "state", "since", "last_seen", "last_run_ended", "last_run_status",
            "files_waiting", "keeping_up", "why",
        ],
        rows,
    )  # fmt: skip
    return (
        f'<h2>Watcher</h2><p id="watch-headline" class="watch-{kind}">{escape(headline)}</p>'
        f"{counts}{table if rows else ''}"
    )


def _cell(value: Any) -> str:
    if value is None:
        return "<td></td>"
    if isinstance(value, float | int) and not isinstance(value, bool):
        return f'<td class="num">{format_number(value)}</td>'
    if isinstance(value, datetime):
        return f"<td>{value:%Y-%m-%d %H:%M:%S}</td>"
    return f"<td>{escape(str(value))}</td>"


def _table(table_id: str, columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> str:
    head = "".join(f"<th>{escape(column)}</th>" for column in columns)
    body = "".join(
        "<tr>" + "".join(_cell(row.get(column)) for column in columns) + "</tr>" for row in rows
    )
    return f'<table id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


STYLE = """
body { font-family: sans-serif; margin: 24px auto; max-width: 920px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 16px; margin: 28px 0 4px; }
figure { margin: 0 0 12px; } figcaption { color: #555; font-size: 13px; margin-top: 2px; }
table { border-collapse: collapse; font-size: 12px; margin: 6px 0 16px; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.status-error, .status-killed { color: #c23b3b; font-weight: bold; }
.watch-behind { color: #c23b3b; font-weight: bold; } .watch-ok { color: #2f6db5; }
"""


def build_report(data: LakeData, generated_at: datetime) -> str:
    """The page: charts with a title and a line on what to look for, and two tables."""
    charts = report_charts(data)
    recent = latest_events(data.run_events)[:10]
    figures = "".join(
        f'<figure id="figure-{chart.chart_id}"><h2>{escape(chart.title)}</h2>{chart.svg}'
        f"<figcaption>{escape(chart.look_for)}</figcaption></figure>"
        for chart in charts
    )
    runs_table = _table(
        "recent-runs",
        ["started_at", "command", "tenants", "status", "seconds", "files_ingested", "message"],
        recent,
    )
    health_table = _table(
        "graph-health",
        [
            "tenant_id", "profile_count", "identities_p50", "identities_p90", "identities_p99",
            "identities_max", "max_profile_identities", "records_p99", "records_max",
            "largest_profile_id",
        ],
        sorted(data.graph_health, key=lambda row: row["tenant_id"]),
    )  # fmt: skip
    techniques = last_run_techniques(data.run_nodes)
    techniques_table = (
        _table("mart-techniques", ["node_name", "technique", "why"], techniques)
        if techniques
        else "<p>The last run brought no mart up to date.</p>"
    )
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>Profile Lake report: {escape(data.schema)}</title><style>{STYLE}</style>"
        "</head><body>"
        f"<h1>Profile Lake: schema {escape(data.schema)}</h1>"
        f"<p>Generated {generated_at:%Y-%m-%d %H:%M} UTC from the lake's Delta tables: "
        "run_history, run_node_history, ingest_errors, identity_graph_health and "
        "identity_graph_top_identities. Hover a bar or point for its value.</p>"
        f"{watch_section(data, generated_at)}"
        f"<h2>Recent runs</h2>{runs_table}"
        f"{erasure_section(data, generated_at)}"
        "<h2>Marts in the last run: how each was brought up to date</h2>"
        "<p>keys: the keys its sources' changes reach; tenants: the full build of the tenants "
        "its inputs wrote; whole: its full build. Each MERGE writes only the rows that differ "
        "(docs/incremental-marts.md).</p>"
        f"{techniques_table}{figures}"
        f"<h2>Identity graph per tenant</h2>{health_table}</body></html>\n"
    )


def write_report(home: Path, schema: str, output: Path) -> Path:
    html = build_report(read_lake(home, schema), datetime.now(UTC))
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(html, encoding="utf-8")
    return output


def run_report(output: Path) -> int:
    home = Path(os.environ.get("PROFILE_LAKE_HOME", ".lake"))
    schema = os.environ.get("PROFILE_LAKE_SCHEMA", "profile_lake")
    if not (home / "warehouse" / f"{schema}_control.db").is_dir():
        print(f"No run history of schema {schema} under {home / 'warehouse'}: run `make run`.")
        return 1
    written = write_report(home, schema, output)
    print(f"Report written to {written.resolve()} (one file; open it in a browser)")
    return 0
