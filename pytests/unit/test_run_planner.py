"""One run's plans on a warehouse of fake Delta logs: what runs, what is skipped, what is
recorded for the next run."""

from __future__ import annotations

import json
from pathlib import Path

from profile_lake.run_planner import RunPlanner, RunSettings, node_variables

GRAPH = {
    "nodes": {
        "model.p.records": {
            "depends_on": {"nodes": ["source.p.landing.records"]},
            "config": {"materialized": "incremental"},
            "schema": "lake",
            "alias": "records",
        },
        "model.p.history": {
            "depends_on": {"nodes": ["model.p.records"]},
            "config": {"materialized": "view"},
            "schema": "lake",
            "alias": "history",
        },
    },
    "sources": {"source.p.landing.records": {"schema": "lake_landing", "identifier": "records"}},
}
RECORDS = {
    "unique_id": "model.p.records",
    "resource_type": "model",
    "checksum": {"checksum": "a1"},
    "config": {"materialized": "incremental"},
    "schema": "lake",
    "alias": "records",
}
TEST = {
    "unique_id": "test.p.not_null_records_id",
    "resource_type": "test",
    "checksum": {"checksum": "t1"},
    "config": {"materialized": "test"},
    "schema": "lake_tests",
    "alias": "not_null_records_id",
}
GRAPH["nodes"][TEST["unique_id"]] = {**TEST, "depends_on": {"nodes": ["model.p.records"]}}


def commit(warehouse: Path, schema: str, table: str, version: int) -> None:
    log = warehouse / f"{schema}.db" / table / "_delta_log"
    log.mkdir(parents=True, exist_ok=True)
    (log / f"{version:020d}.json").write_text("{}")


def planner(tmp_path: Path, **settings: object) -> RunPlanner:
    code = tmp_path / "models"
    code.mkdir(exist_ok=True)
    (code / "records.sql").write_text(str(settings.pop("code", "select 1")))
    run = RunSettings(
        **{"command": "build", "full_refresh": False, "variables": {}, "target": "local"} | settings
    )
    return RunPlanner([code], tmp_path / "warehouse", tmp_path / "state", run)


def test_a_node_is_skipped_until_what_it_reads_moves(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    commit(warehouse, "lake_landing", "records", 0)
    commit(warehouse, "lake", "records", 0)
    first = planner(tmp_path)
    assert not first.plan(RECORDS, GRAPH, "written rows").skip
    commit(warehouse, "lake", "records", 1)  # the run's MERGE
    assert first.record(["model.p.records"], "run-1") == ["model.p.records"]

    second = planner(tmp_path)
    plan = second.plan(RECORDS, GRAPH, "written rows")
    assert plan.skip and plan.reason.endswith("since run run-1")
    assert second.record(["model.p.records"], "run-2") == []  # a skipped node keeps its record
    assert second.skipped() == {"model.p.records": plan.reason}

    commit(warehouse, "lake_landing", "records", 1)  # a new file landed
    assert not planner(tmp_path).plan(RECORDS, GRAPH, "written rows").skip
    assert not planner(tmp_path, code="select 2").plan(RECORDS, GRAPH, "written rows").skip


def test_a_node_writing_a_table_it_reads_is_not_run_again_for_its_own_write(
    tmp_path: Path,
) -> None:
    """stg_erasures__requests clears the text of the landing lines it read: that commit alone
    does not run it again; a commit of another writer in between still does."""
    warehouse = tmp_path / "warehouse"
    commit(warehouse, "lake_landing", "records", 0)
    commit(warehouse, "lake", "records", 0)
    first = planner(tmp_path)
    first.plan(RECORDS, GRAPH, "written rows")
    before = first.commit_of("lake_landing.records")
    commit(warehouse, "lake_landing", "records", 1)  # the node's own write
    assert first.note_own_write("model.p.records", "lake_landing.records", before)
    first.record(["model.p.records"], "run-1")
    assert planner(tmp_path).plan(RECORDS, GRAPH, "written rows").skip

    commit(warehouse, "lake_landing", "records", 2)  # a new file landed
    second = planner(tmp_path)
    assert not second.plan(RECORDS, GRAPH, "written rows").skip
    before = second.commit_of("lake_landing.records")
    commit(warehouse, "lake_landing", "records", 3)  # another ingest, then the node's write
    commit(warehouse, "lake_landing", "records", 4)
    assert not second.note_own_write("model.p.records", "lake_landing.records", before)
    second.record(["model.p.records"], "run-2")
    assert not planner(tmp_path).plan(RECORDS, GRAPH, "written rows").skip


def test_an_edit_to_any_project_file_runs_every_node(tmp_path: Path) -> None:
    """A node's SQL is not all that makes it: macros, seeds, the YAML and this package reach
    it too, so the planner treats an edit anywhere in the project as new code for every node."""
    commit(tmp_path / "warehouse", "lake_landing", "records", 0)
    commit(tmp_path / "warehouse", "lake", "records", 0)
    first = planner(tmp_path)
    for node in (RECORDS, TEST):
        assert not first.plan(node, GRAPH, "written rows").skip
    first.record([RECORDS["unique_id"], TEST["unique_id"]], "run-1")
    assert all(planner(tmp_path).plan(node, GRAPH, "written rows").skip for node in (RECORDS, TEST))

    (tmp_path / "models" / "macros_elsewhere.sql").write_text("{% macro m() %}1{% endmacro %}")
    edited = planner(tmp_path)
    for node in (RECORDS, TEST):
        plan = edited.plan(node, GRAPH, "written rows")
        assert not plan.skip and plan.reason == "its code or the run's settings changed"


def test_a_data_test_is_skipped_only_on_the_rows_it_checked(tmp_path: Path) -> None:
    commit(tmp_path / "warehouse", "lake", "records", 3)
    first = planner(tmp_path)
    assert not first.plan(TEST, GRAPH, "written rows").skip
    first.record([TEST["unique_id"]], "run-1")
    assert planner(tmp_path).plan(TEST, GRAPH, "written rows").skip
    assert not planner(tmp_path).plan(TEST, GRAPH, "every row").skip


def test_what_always_runs(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    commit(warehouse, "lake_landing", "records", 0)
    commit(warehouse, "lake", "records", 0)
    first = planner(tmp_path)
    first.plan(RECORDS, GRAPH, "written rows")
    first.record(["model.p.records"], "run-1")
    assert planner(tmp_path).plan(RECORDS, GRAPH, "written rows").skip
    reasons = {
        "full refresh": planner(tmp_path, full_refresh=True),
        "--empty": planner(tmp_path, empty=True),
        "--defer": planner(tmp_path, defer=True),
        "dbt compile": planner(tmp_path, command="compile"),
    }
    for name, each in reasons.items():
        assert not each.plan(RECORDS, GRAPH, "written rows").skip, name
    # an --empty run wrote no node's real state: it records nothing
    assert reasons["--empty"].record(["model.p.records"], "run-e") == []
    clock = {**RECORDS, "config": {"materialized": "incremental", "meta": {}}}
    clock["config"]["meta"]["skip_when_unchanged"] = False
    assert "clock" in planner(tmp_path).plan(clock, GRAPH, "written rows").reason
    gone = planner(tmp_path).plan(RECORDS, GRAPH, "written rows", exists=False)
    assert not gone.skip and "catalog" in gone.reason
    remote = RunPlanner([], None, tmp_path / "state", RunSettings("build", False, {}, "local"))
    assert "not a local folder" in remote.plan(RECORDS, GRAPH, "written rows").reason


def test_another_tenant_scope_keeps_its_own_record(tmp_path: Path) -> None:
    commit(tmp_path / "warehouse", "lake_landing", "records", 0)
    commit(tmp_path / "warehouse", "lake", "records", 0)
    for variables in ({"tenants": ["acme"]}, {"tenants": ["globex"]}):
        each = planner(tmp_path, variables=variables)
        assert not each.plan(RECORDS, GRAPH, "written rows").skip
        each.record(["model.p.records"], "run")
    for variables in ({"tenants": ["acme"]}, {"tenants": ["globex"]}):
        assert planner(tmp_path, variables=variables).plan(RECORDS, GRAPH, "written rows").skip


def test_a_forced_technique_shares_the_record_of_the_runs_without_it(tmp_path: Path) -> None:
    """Every technique gives the same rows: forcing one is not a new variant of the lake."""
    commit(tmp_path / "warehouse", "lake_landing", "records", 0)
    commit(tmp_path / "warehouse", "lake", "records", 0)
    first = planner(tmp_path, variables=node_variables({"tenants": ["acme"]}))
    first.plan(RECORDS, GRAPH, "written rows")
    first.record(["model.p.records"], "run")
    forced = node_variables({"tenants": ["acme"], "mart_technique": "whole"})
    assert forced == {"tenants": ["acme"]}
    assert planner(tmp_path, variables=forced).plan(RECORDS, GRAPH, "written rows").skip


def test_a_view_is_judged_by_its_definition(tmp_path: Path) -> None:
    view = {
        **RECORDS,
        "unique_id": "model.p.history",
        "alias": "history",
        "config": {"materialized": "view"},
    }
    first = planner(tmp_path)
    assert not first.plan(view, GRAPH, "written rows").skip
    first.record(["model.p.history"], "run-1")
    commit(tmp_path / "warehouse", "lake", "records", 7)  # what it reads moved: no matter
    assert planner(tmp_path).plan(view, GRAPH, "written rows").skip
    assert not planner(tmp_path).plan(view, GRAPH, "written rows", exists=False).skip


def test_a_node_whose_rows_fall_due_is_skipped_until_one_has(tmp_path: Path) -> None:
    """profile_segments' rows say when the clock can change them (next_change_ts): with
    nothing new it is skipped while the smallest of them, from its table's statistics, is to
    come, and runs once it has come (at the run's clock var, when given)."""
    warehouse = tmp_path / "warehouse"
    commit(warehouse, "lake_landing", "records", 0)
    commit(warehouse, "lake", "records", 0)
    due = {"column": "next_change_ts", "clock_var": "segment_evaluation_ts"}
    segments = {**RECORDS, "config": {"materialized": "incremental", "meta": {"run_when_due": due}}}

    def statistics(minimum: str) -> None:
        found = {"numRecords": 2, "nullCount": {}, "minValues": {"next_change_ts": minimum}}
        crc = warehouse / "lake.db" / "records" / "_delta_log" / f"{0:020d}.crc"
        crc.write_text(json.dumps({"allFiles": [{"path": "p", "stats": json.dumps(found)}]}))

    statistics("2999-01-01T00:00:00.000Z")
    first = planner(tmp_path)
    first.plan(segments, GRAPH, "written rows")
    first.record([segments["unique_id"]], "run-1")
    assert planner(tmp_path).plan(segments, GRAPH, "written rows").skip

    statistics("2001-01-01T00:00:00.000Z")
    plan = planner(tmp_path).plan(segments, GRAPH, "written rows")
    assert not plan.skip and "next_change_ts (2001-01-01T00:00:00+00:00) has come" in plan.reason
    # the clock var is the moment compared: before the row's, nothing is due
    early = {"segment_evaluation_ts": "2000-06-01T00:00:00"}
    first = planner(tmp_path, variables=early)
    first.plan(segments, GRAPH, "written rows")
    first.record([segments["unique_id"]], "run-2")
    assert planner(tmp_path, variables=early).plan(segments, GRAPH, "written rows").skip


def write_files(warehouse: Path, schema: str, table: str, version: int, *tenants: str) -> None:
    """A commit adding one data file per tenant partition."""
    log = warehouse / f"{schema}.db" / table / "_delta_log"
    log.mkdir(parents=True, exist_ok=True)
    adds = [
        {
            "add": {
                "path": f"tenant_id={t}/{version}.parquet",
                "partitionValues": {"tenant_id": t},
                "size": 1,
                "dataChange": True,
            }
        }
        for t in tenants
    ]
    (log / f"{version:020d}.json").write_text("\n".join(json.dumps(a) for a in adds) + "\n")


def test_a_mart_whose_inputs_moved_recomputes_the_tenants_they_wrote(tmp_path: Path) -> None:
    """The tenants a `tenants` run recomputes are those the commits since the node's last
    success wrote, its own table's included; for new code, every tenant (whole)."""
    warehouse = tmp_path / "warehouse"
    write_files(warehouse, "lake_landing", "records", 0, "acme", "globex")
    write_files(warehouse, "lake", "records", 0, "acme", "globex")
    first = planner(tmp_path)
    first.plan(RECORDS, GRAPH, "written rows")
    assert first.technique(RECORDS["unique_id"], "tenants", tenant_keyed=True).name == "whole"
    write_files(warehouse, "lake", "records", 1, "acme", "globex")
    first.record([RECORDS["unique_id"]], "run-1")

    write_files(warehouse, "lake_landing", "records", 1, "globex")
    write_files(warehouse, "lake_landing", "records", 2, "initech")
    write_files(warehouse, "lake", "records", 2, "umbrella")  # another writer's rows
    moved = planner(tmp_path)
    assert moved.plan(RECORDS, GRAPH, "written rows").inputs_moved
    chosen = moved.technique(RECORDS["unique_id"], "tenants", tenant_keyed=True)
    assert (chosen.name, chosen.tenants) == ("tenants", ("globex", "initech", "umbrella"))
    assert moved.techniques()[RECORDS["unique_id"]] == chosen

    not_keyed = planner(tmp_path)
    not_keyed.plan(RECORDS, GRAPH, "written rows")
    assert not_keyed.technique(RECORDS["unique_id"], "tenants").name == "whole"
    edited = planner(tmp_path, code="select 2")
    assert not edited.plan(RECORDS, GRAPH, "written rows").inputs_moved
    assert edited.technique(RECORDS["unique_id"], "tenants", tenant_keyed=True).name == "whole"


def test_a_node_needing_a_table_is_skipped_until_it_exists(tmp_path: Path) -> None:
    """int_erasure_rewrites has nothing to do before a request is applied (no erased set)."""
    warehouse = tmp_path / "warehouse"
    commit(warehouse, "lake_landing", "records", 0)
    needing = {
        **RECORDS,
        "config": {"materialized": "incremental", "meta": {"runs_only_with_table": "ctl.erased"}},
    }
    # not built yet: it runs, to create its table
    assert not planner(tmp_path).plan(needing, GRAPH, "written rows", exists=False).skip
    commit(warehouse, "lake", "records", 0)
    plan = planner(tmp_path).plan(needing, GRAPH, "written rows")
    assert plan.skip and "ctl.erased does not exist" in plan.reason
    assert not planner(tmp_path, full_refresh=True).plan(needing, GRAPH, "written rows").skip
    commit(warehouse, "ctl", "erased", 0)
    assert not planner(tmp_path).plan(needing, GRAPH, "written rows").skip


def tagged_commit(warehouse: Path, schema: str, table: str, version: int, tag: str) -> None:
    log = warehouse / f"{schema}.db" / table / "_delta_log"
    log.mkdir(parents=True, exist_ok=True)
    (log / f"{version:020d}.json").write_text(
        json.dumps({"commitInfo": {"operation": "MERGE", "userMetadata": tag}}) + "\n"
    )


def test_an_erasures_rewrite_of_what_a_node_read_does_not_run_it_again(tmp_path: Path) -> None:
    """int_erasure_rewrites rewrites staged lines after their readers ran; its commits carry
    NEUTRAL_COMMIT_TAG. Any other commit in between still runs the reader."""
    from profile_lake.run_state import NEUTRAL_COMMIT_TAG

    warehouse = tmp_path / "warehouse"
    commit(warehouse, "lake_landing", "records", 0)
    commit(warehouse, "lake", "records", 0)
    first = planner(tmp_path)
    first.plan(RECORDS, GRAPH, "written rows")
    commit(warehouse, "lake", "records", 1)  # the node's write
    tagged_commit(warehouse, "lake_landing", "records", 1, NEUTRAL_COMMIT_TAG)
    tagged_commit(warehouse, "lake_landing", "records", 2, NEUTRAL_COMMIT_TAG)
    first.record(["model.p.records"], "run-1")
    assert planner(tmp_path).plan(RECORDS, GRAPH, "written rows").skip

    second = planner(tmp_path)
    second.plan(RECORDS, GRAPH, "written rows")
    tagged_commit(warehouse, "lake_landing", "records", 3, "someone else")
    tagged_commit(warehouse, "lake_landing", "records", 4, NEUTRAL_COMMIT_TAG)
    second.record(["model.p.records"], "run-2")  # skipped: keeps run-1's record
    assert not planner(tmp_path).plan(RECORDS, GRAPH, "written rows").skip
