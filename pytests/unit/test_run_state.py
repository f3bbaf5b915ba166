"""Which nodes a run skips: the plan from recorded states, the store, the Delta log reader."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from profile_lake.delta_log import (
    latest_commit,
    latest_version,
    local_warehouse,
    managed_table_path,
)
from profile_lake.run_state import (
    NodeState,
    RunStateStore,
    code_fingerprint,
    due_reason,
    fingerprint,
    plan_node,
    state_to_record,
    tables_read,
)

RECORDED = NodeState("f1", {"s.records": "4@1", "s.tenants": "0@1"}, "run-1")


def test_a_node_runs_until_a_success_is_recorded() -> None:
    plan = plan_node(None, "f1", {"s.records": "4@1"})
    assert not plan.skip and plan.reason == "no earlier success recorded"


def test_a_node_is_skipped_when_nothing_it_reads_moved() -> None:
    plan = plan_node(RECORDED, "f1", {"s.records": "4@1", "s.tenants": "0@1"})
    assert plan.skip and plan.reason == "skipped: nothing it reads changed since run run-1"


def test_a_moved_input_a_new_table_or_new_code_runs_it() -> None:
    moved = plan_node(RECORDED, "f1", {"s.records": "5@2", "s.tenants": "0@1"})
    assert not moved.skip and moved.reason == "s.records moved from version 4 to 5"
    # a table dropped and created again restarts its versions: the commit time tells
    recreated = plan_node(RECORDED, "f1", {"s.records": "4@9", "s.tenants": "0@1"})
    assert not recreated.skip
    added = plan_node(RECORDED, "f1", {"s.records": "4@1", "s.tenants": "0@1", "s.x": "0@1"})
    assert not added.skip and "s.x moved from version unrecorded" in added.reason
    new_code = plan_node(RECORDED, "f2", {"s.records": "4@1", "s.tenants": "0@1"})
    assert not new_code.skip
    # only a recorded input that moved says what the run must recompute (techniques)
    assert moved.inputs_moved and recreated.inputs_moved
    assert not (added.inputs_moved or new_code.inputs_moved)


def test_an_unreadable_input_or_an_always_run_reason_runs_it() -> None:
    unknown = plan_node(RECORDED, "f1", {"s.records": None, "s.tenants": "0@1"})
    assert not unknown.skip and "no Delta log" in unknown.reason
    forced = plan_node(RECORDED, "f1", dict(RECORDED.versions), always_run="a full refresh")
    assert not forced.skip and forced.reason == "a full refresh"


def test_a_success_records_what_it_read_and_the_version_it_wrote() -> None:
    plan = plan_node(None, "f1", {"s.records": "4@1"})
    state = state_to_record(plan, {"s.profiles": "7@3"}, "run-2")
    assert state == NodeState("f1", {"s.records": "4@1", "s.profiles": "7@3"}, "run-2")
    assert state_to_record(plan, {"s.profiles": None}, "run-2") is None


def test_the_store_keeps_one_file_per_node_and_variant_written_whole(tmp_path: Path) -> None:
    store = RunStateStore(tmp_path / "state")
    records = "model.profile_lake.records"
    assert store.load(records, "all") is None
    store.save(records, "all", RECORDED)
    assert store.load(records, "all") == RECORDED
    assert store.load(records, "acme") is None  # a run of other tenants keeps its own
    assert [p.name for p in (tmp_path / "state").iterdir()] == [f"{records}.all.json"]
    (tmp_path / "state" / f"{records}.all.json").write_text("{not json")
    assert store.load(records, "all") is None
    long_test = "test.profile_lake.table_checks_" + "x" * 300
    store.save(long_test, "all", RECORDED)
    assert store.load(long_test, "all") == RECORDED
    assert store.load(long_test + "y", "all") is None


def test_fingerprints_follow_content_not_order(tmp_path: Path) -> None:
    assert fingerprint({"a": 1, "b": [2]}) == fingerprint({"b": [2], "a": 1})
    assert fingerprint({"a": 1}) != fingerprint({"a": 2})
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "x.sql").write_text("select 1")
    before = code_fingerprint([tmp_path / "m"], [".sql"])
    (tmp_path / "m" / "notes.txt").write_text("not code")
    assert code_fingerprint([tmp_path / "m"], [".sql"]) == before
    (tmp_path / "m" / "x.sql").write_text("select 2")
    assert code_fingerprint([tmp_path / "m"], [".sql"]) != before


def test_tables_read_see_through_views() -> None:
    nodes = {
        "model.p.mart": {
            "depends_on": {"nodes": ["model.p.view", "seed.p.tenants"]},
            "config": {"materialized": "incremental"},
            "schema": "s",
            "alias": "mart",
        },
        "model.p.view": {
            "depends_on": {"nodes": ["model.p.base", "source.p.landing.records"]},
            "config": {"materialized": "view"},
            "schema": "s_int",
            "alias": "view",
        },
        "model.p.base": {
            "depends_on": {"nodes": []},
            "config": {"materialized": "table"},
            "schema": "s_int",
            "alias": "base",
        },
        "seed.p.tenants": {
            "depends_on": {"nodes": []},
            "config": {"materialized": "seed"},
            "schema": "s",
            "alias": "tenants",
        },
    }
    sources = {"source.p.landing.records": {"schema": "s_landing", "identifier": "records"}}
    read = tables_read("model.p.mart", nodes, sources)
    assert read.tables == {("s_int", "base"), ("s_landing", "records"), ("s", "tenants")}
    assert read.unknown == ()
    nodes["model.p.view"]["depends_on"]["nodes"].append("model.p.gone")
    assert tables_read("model.p.mart", nodes, sources).unknown == ("model.p.gone",)


def test_the_latest_commit_comes_from_the_log_folder(tmp_path: Path) -> None:
    table = managed_table_path(tmp_path, "Profile_Lake", "Records")
    assert table == tmp_path / "profile_lake.db" / "records"
    assert latest_version(table) is None and latest_commit(table) is None
    log = table / "_delta_log"
    log.mkdir(parents=True)
    for name in ["00000000000000000000.json", "00000000000000000001.json", "_last_checkpoint"]:
        (log / name).write_text("{}")
    (log / "00000000000000000010.checkpoint.parquet").write_bytes(b"")
    (log / "00000000000000000011.json.tmp").write_text("{}")
    assert latest_version(table) == 10
    assert latest_commit(table).startswith("10@")
    assert managed_table_path(tmp_path, "default", "t") == tmp_path / "t"
    # a checkpoint outliving its commit files (log cleanup) still dates the version
    (log / "00000000000000000001.json").unlink()
    (log / "00000000000000000000.json").unlink()
    assert latest_commit(table).startswith("10@")


def test_only_a_local_warehouse_is_listed(tmp_path: Path) -> None:
    assert local_warehouse(f"file:{tmp_path}") == tmp_path
    assert local_warehouse(f"file://{tmp_path}") == tmp_path
    assert local_warehouse(str(tmp_path)) == tmp_path
    assert local_warehouse("s3a://bucket/warehouse") is None
    assert local_warehouse("hdfs://namenode:8020/warehouse") is None


def test_a_node_whose_rows_fall_due_runs_once_one_has() -> None:
    now = datetime(2026, 12, 2, 12, tzinfo=UTC)
    assert due_reason("next_change_ts", True, None, now) is None  # no row ever falls due
    assert due_reason("next_change_ts", True, datetime(2026, 12, 9, tzinfo=UTC), now) is None
    come = due_reason("next_change_ts", True, datetime(2026, 12, 2, 11, tzinfo=UTC), now)
    assert come == "a row's next_change_ts (2026-12-02T11:00:00+00:00) has come"
    assert due_reason("next_change_ts", True, now, now) is not None  # due at the very moment
    assert "do not give" in (due_reason("next_change_ts", False, None, now) or "")
