"""Seeing the lake: run history, source freshness, identity-graph health and the report page,
on the sample lake (built once per session), the report checked in headless Chromium.

Expected values come from the lake's tables read with Spark SQL or from the landing files,
never from the code under test.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict

import numpy as np
import pytest

from profile_lake.ingest.lines import STREAMS
from profile_lake.report import (
    ERROR_CODES_SHOWN,
    IDENTITIES_SHOWN,
    NODES_SHOWN,
    RUNS_SHOWN,
    write_report,
)
from pytests.support.browser import (
    chromium,
    console_errors,
    docs_column_names,
    docs_lineage_names,
    open_docs_lineage,
    open_docs_model,
    serve_folder,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def sample_run(sample_lake, rows) -> dict:
    """The sample build's row of run_history: the first run on the schema."""
    runs = rows(f"select * from {sample_lake.table('run_history')} order by started_at")
    assert runs, "the sample build wrote no run history"
    return runs[0]


def test_the_sample_build_is_in_the_run_history(
    sample_lake, sample_run, sample_manifest, rows
) -> None:
    run = sample_run
    assert (run["command"], run["status"], run["tenants"]) == ("dbt build", "success", "all")
    assert run["started_at"] < run["ended_at"] and run["seconds"] > 0
    # the generator's manifest of the sample: files, lines, good and bad lines per stream
    streams = sample_manifest["streams"]
    # and the sample's one erasure request (sample/landing/erasures), whose person's lines
    # are erased: neither accepted nor quarantined
    assert run["files_ingested"] == sample_manifest["totals"]["files"] + 1
    generated = {
        stream: streams.get(stream, {"lines": 1, "good": 1} if stream == "erasures" else {})
        for stream in STREAMS
    }
    erased = dict.fromkeys(STREAMS, 0)
    for row in rows(
        "select stream, sum(lines_erased) as lines "
        f"from {sample_lake.table('ingest_file_accounting')} group by stream"
    ):
        erased[row["stream"]] = row["lines"]
    assert erased["records"] > 0
    assert run["lines_landed"] == {stream: generated[stream]["lines"] for stream in STREAMS}
    assert run["lines_accepted"] == {
        stream: generated[stream]["good"] - erased[stream] for stream in STREAMS
    }
    quarantined = rows(
        "select stream, count(distinct source_file, line_number) as lines "
        f"from {sample_lake.table('ingest_errors')} group by stream"
    )
    assert run["lines_quarantined"] == {
        **dict.fromkeys(STREAMS, 0),
        **{row["stream"]: row["lines"] for row in quarantined},
    }
    for stream in STREAMS:
        landed = run["lines_landed"][stream]
        counted = run["lines_accepted"][stream] + run["lines_quarantined"][stream]
        assert counted + erased[stream] == landed
    lags = rows(f"select tenant_id, lag_minutes from {sample_lake.table('tenant_lag')}")
    assert run["lag_minutes"] == {
        row["tenant_id"]: float(row["lag_minutes"])
        for row in lags
        if row["lag_minutes"] is not None
    }
    assert run["nodes_failed"] == 0


def test_run_node_history_has_every_node_of_the_build(sample_lake, sample_run, rows) -> None:
    nodes = {
        row["node_name"]: row
        for row in rows(
            f"select * from {sample_lake.table('run_node_history')} "
            f"where run_id = '{sample_run['run_id']}'"
        )
    }
    # dbt's results in on-run-end hold the nodes, not the hooks
    statuses = {
        name: status
        for name, status in sample_lake.build.statuses().items()
        if not name.startswith("profile_lake-on-run-")
    }
    assert {name: nodes[name]["status"] for name in statuses} == statuses
    assert sample_run["nodes_run"] == len(nodes)
    # rows written, from the Delta log: a seed's rows, and every live record's first insert
    seed_rows = rows(f"select count(*) as n from {sample_lake.table('tenants')}")[0]["n"]
    assert nodes["tenants"]["rows_affected"] == seed_rows
    records = rows(f"select count(*) as n from {sample_lake.table('records')}")[0]["n"]
    assert nodes["records"]["rows_affected"] >= records > 0
    assert nodes["run_history"]["rows_affected"] is None  # a view writes no rows
    for name, node in nodes.items():
        assert node["seconds"] >= 0 and node["started_at"] <= node["completed_at"], name


def test_source_freshness_passes_and_is_recorded(sample_lake, rows) -> None:
    run = sample_lake.dbt(["source", "freshness"])
    sources = [
        result for result in run.result.result.results if result.node.resource_type == "source"
    ]
    # every landing table but `erasures`, whose requests are rare (no freshness is set); the
    # erasure_salts control table has none either
    assert {result.node.name for result in sources} == set(STREAMS) - {"erasures"}
    for result in sources:
        assert str(result.status) == "pass", result.node.unique_id
        assert result.max_loaded_at is not None, result.node.unique_id
    recorded = rows(
        f"select command, status, nodes_run from {sample_lake.table('run_history')} "
        "where command = 'dbt source freshness'"
    )
    assert {"command": "dbt source freshness", "status": "success", "nodes_run": 3} in recorded


def test_graph_health_matches_the_profiles(sample_lake, rows) -> None:
    health = {
        row["tenant_id"]: row
        for row in rows(f"select * from {sample_lake.table('identity_graph_health')}")
    }
    tenants = rows(f"select tenant_id, max_profile_identities from {sample_lake.table('tenants')}")
    assert set(health) == {row["tenant_id"] for row in tenants}
    profiles = defaultdict(list)
    columns = "tenant_id, profile_id, identity_count, record_count"
    for row in rows(f"select {columns} from {sample_lake.table('profiles')}"):
        profiles[row["tenant_id"]].append(row)
    namespaces = defaultdict(lambda: defaultdict(int))
    for row in rows(
        f"select tenant_id, identity_id from {sample_lake.table('profile_identities')}"
    ):
        namespaces[row["tenant_id"]][row["identity_id"].split(":", 1)[0]] += 1
    assert profiles, "the sample has profiles"
    for tenant in {row["tenant_id"] for row in tenants}:
        row, members = health[tenant], profiles.get(tenant, [])
        assert row["profile_count"] == len(members)
        assert row["max_profile_identities"] == next(
            t["max_profile_identities"] for t in tenants if t["tenant_id"] == tenant
        )
        if not members:
            assert row["identities_max"] is None
            continue
        sizes = [member["identity_count"] for member in members]
        records = [member["record_count"] for member in members]
        assert row["identities_max"] == max(sizes) and row["records_max"] == max(records)
        for column, values, q in (
            ("identities_p50", sizes, 50), ("identities_p90", sizes, 90),
            ("identities_p99", sizes, 99), ("records_p99", records, 99),
        ):  # fmt: skip
            assert row[column] == pytest.approx(float(np.percentile(values, q))), column
        assert row["identity_count"] == sum(sizes)
        assert dict(row["identities_by_namespace"]) == dict(namespaces[tenant])
        assert sum(row["profiles_by_identity_count"].values()) == len(members)
        largest = min((-m["identity_count"], m["profile_id"]) for m in members)[1]
        assert row["largest_profile_id"] == largest
        assert row["profiles_over_bound"] == sum(
            size > row["max_profile_identities"] for size in sizes
        )


def expected_connections(sample_lake, rows) -> dict[str, list[tuple[str, int, int]]]:
    """Per tenant, (identity, linked identities, live records) by linked, records, identity."""
    canonical = {
        (row["tenant_id"], row["identity_id"]): row["canonical_id"]
        for row in rows(
            f"select tenant_id, identity_id, canonical_id from {sample_lake.table('identity_map')}"
        )
    }
    linked, carried = defaultdict(set), defaultdict(set)
    for record in rows(
        f"select tenant_id, record_id, primary_id, related_ids from {sample_lake.table('records')}"
    ):
        tenant = record["tenant_id"]
        primary = canonical.get((tenant, record["primary_id"]), record["primary_id"])
        carried[(tenant, primary)].add(record["record_id"])
        for related in record["related_ids"] or []:
            other = canonical.get((tenant, related), related)
            carried[(tenant, other)].add(record["record_id"])
            if other != primary:
                linked[(tenant, primary)].add(other)
                linked[(tenant, other)].add(primary)
    by_tenant = defaultdict(list)
    for (tenant, identity), records in carried.items():
        by_tenant[tenant].append((identity, len(linked[(tenant, identity)]), len(records)))
    return {
        tenant: sorted(found, key=lambda item: (-item[1], -item[2], item[0]))
        for tenant, found in by_tenant.items()
    }


def test_top_identities_are_the_most_connected(sample_lake, rows) -> None:
    top = defaultdict(list)
    for row in rows(
        f"select * from {sample_lake.table('identity_graph_top_identities')} "
        "order by tenant_id, connection_rank"
    ):
        top[row["tenant_id"]].append(
            (row["identity_id"], row["linked_identities"], row["record_count"])
        )
    expected = expected_connections(sample_lake, rows)
    assert {tenant: found[:20] for tenant, found in expected.items()} == dict(top)
    assert max(item[1] for found in expected.values() for item in found) > 1


def test_the_size_test_warns_when_a_profile_passes_the_bound(sample_lake, spark) -> None:
    health = sample_lake.table("identity_graph_health")
    select = ["--select", "identity_graph_health", "--exclude-resource-type", "unit_test"]
    passing = sample_lake.build.statuses()  # the sample's whole build ran the test
    test_name = "table_checks_identity_graph_health__warn"  # identities_max's bound
    assert passing[test_name] == "pass"
    bounds = {row.tenant_id: row.max_profile_identities for row in spark.table(health).collect()}
    spark.sql(f"update {health} set max_profile_identities = 1")
    try:
        warned = sample_lake.dbt(["test", *select])
    finally:
        for tenant, bound in bounds.items():
            spark.sql(
                f"update {health} set max_profile_identities = {bound} where tenant_id = '{tenant}'"
            )
    assert warned.success  # a warning does not fail the run
    assert warned.statuses()[test_name] == "warn"


# ---------- the report page, in a real browser


def expected_marks(sample_lake, rows) -> dict[str, int]:
    """Marks each chart must draw for the sample lake, from SQL over its tables."""
    runs = rows(
        f"select * from {sample_lake.table('run_history')} where status in ('success', 'error') "
        f"order by started_at desc limit {RUNS_SHOWN}"
    )
    run_ids = ", ".join(f"'{run['run_id']}'" for run in runs)
    node_rows = rows(
        f"select node_name, max(seconds) over (partition by node_name) as slowest "
        f"from {sample_lake.table('run_node_history')} "
        f"where run_id in ({run_ids}) and resource_type in ('model', 'seed', 'snapshot')"
    )
    slowest = sorted({(-row["slowest"], row["node_name"]) for row in node_rows})[:NODES_SHOWN]
    shown_nodes = {name for _, name in slowest}
    codes = rows(
        f"select count(distinct error_code) as codes, count(distinct error_code, tenant_id) as "
        f"pairs from {sample_lake.table('ingest_errors')}"
    )[0]
    assert codes["codes"] <= ERROR_CODES_SHOWN, "every code is drawn: the pairs are all shown"
    health = rows(
        f"select max(identities_max) as largest from {sample_lake.table('identity_graph_health')}"
    )
    linking = rows(
        f"select count(*) as n from {sample_lake.table('identity_graph_top_identities')} "
        "where linked_identities > 0"
    )[0]["n"]
    return {
        "lag": sum(len(run["lag_minutes"] or {}) for run in runs),
        "lines": 2 * sum(1 for run in runs if run["files_ingested"]),
        "error_codes": codes["pairs"],
        "run_seconds": len(runs),
        "node_seconds": sum(1 for row in node_rows if row["node_name"] in shown_nodes),
        "profile_sizes": 1 + math.ceil(math.log2(health[0]["largest"])),
        "top_identities": min(IDENTITIES_SHOWN, linking),
    }


def test_the_report_draws_every_chart_in_chromium(sample_lake, lake_home, rows, tmp_path) -> None:
    report = write_report(lake_home, sample_lake.schema, tmp_path / "report.html")
    expected = expected_marks(sample_lake, rows)
    assert expected["lines"] >= 2 and expected["profile_sizes"] > 1 and expected["error_codes"]
    with chromium(width=1000, height=1200) as browser:
        browser.get(report.as_uri())
        drawn = {}
        for figure in browser.find_elements("css selector", "figure"):
            chart = figure.find_element("css selector", "svg[data-chart]")
            drawn[chart.get_attribute("data-chart")] = len(
                chart.find_elements("css selector", "[data-mark]")
            )
            assert figure.find_element("css selector", "h2").text.strip()
            assert figure.find_element("css selector", "figcaption").text.strip()
            # drawn: a chart has its size on the page
            assert chart.size["width"] > 300 and chart.size["height"] > 100
        errors = console_errors(browser)
        runs = browser.find_elements("css selector", "#recent-runs tbody tr")
        statuses = [row.find_elements("css selector", "td")[3].text for row in runs]
        requests = browser.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)"
        )
    assert errors == []
    assert requests == []  # nothing fetched: the page is one file
    assert drawn == expected
    assert "success" in statuses


# ---------- the dbt docs site of the sample build, served locally


def test_docs_site_shows_the_records_columns_and_lineage(sample_docs, sample_lake) -> None:
    manifest = json.loads((sample_docs / "manifest.json").read_text())
    records_id = "model.profile_lake.records"
    columns = set(manifest["nodes"][records_id]["columns"])
    parents = {
        manifest["nodes"][parent]["name"]
        for parent in manifest["parent_map"][records_id]
        if parent.startswith("model.")
    }
    children = {
        manifest["nodes"][child]["name"]
        for child in manifest["child_map"][records_id]
        if child.startswith("model.")
    }
    assert parents and children
    with serve_folder(sample_docs) as base, chromium(width=1400, height=1000) as browser:
        open_docs_model(browser, base, records_id)
        listed = docs_column_names(browser)
        open_docs_lineage(browser)
        lineage = docs_lineage_names(browser)
    assert columns <= listed, f"columns missing from the page: {sorted(columns - listed)}"
    assert parents <= lineage, f"upstream models missing: {sorted(parents - lineage)}"
    assert children <= lineage, f"downstream models missing: {sorted(children - lineage)}"
    assert "records" in lineage
