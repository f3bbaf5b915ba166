"""A run skips every node whose inputs did not move since its last success (docs/run-state.md).

Three builds of the small lake (conftest.py), with this scenario's tenants umbrella and stark:
the first, whole; one with nothing new, whole (every node skipped, the clock's segments too
while no profile's next_change_ts has come, no table written, the run history saying why); one
of every model with new records files only (what they reach runs, the names' branch stays
skipped). That an edit to any
project file runs every node again is the planner's (pytests/unit/test_run_planner.py); that
every node then runs incrementally over a lake with nothing new and equals a full refresh, the
equivalence lake's run eight days on (test_incremental_marts.py).
"""

from __future__ import annotations

import json

import pytest

from pytests.support.dbt_runner import DbtRun

pytestmark = pytest.mark.integration


def node_messages(run: DbtRun) -> dict[str, tuple[str, str]]:
    """Node name -> (resource type, why it was skipped or "") for every node of the build."""
    from dbt.adapters.profile_lake_spark.impl import skipped_reason

    return {
        item.node.name: (str(item.node.resource_type), skipped_reason(item) or "")
        for item in run.result.result.results
        if str(item.node.resource_type) not in ("exposure", "operation")
    }


def ran(messages: dict[str, tuple[str, str]]) -> set[str]:
    return {name for name, (_, reason) in messages.items() if not reason}


def test_a_first_build_runs_every_node(small_lake) -> None:
    first = node_messages(small_lake.runs["first"])
    assert ran(first) == set(first)


def test_a_first_build_runs_the_unit_tests_of_the_models_sql(small_lake) -> None:
    lake = small_lake.lake
    manifest = json.loads((lake.lake_home / "target" / lake.schema / "manifest.json").read_text())
    unit_tests = {test["name"] for test in manifest["unit_tests"].values()}
    assert len(unit_tests) >= 7, unit_tests
    first = node_messages(small_lake.runs["first"])
    assert {name for name, (kind, _) in first.items() if kind == "unit_test"} == unit_tests


def test_a_build_with_nothing_new_skips_every_node_no_row_of_which_is_due(small_lake) -> None:
    """profile_segments reads the clock, but its rows say when the clock can change them
    (next_change_ts): the lake's events are from 2024 to January 2026, but for a line of the
    hostile corpus some 20 hours ahead of the build, whose profile comes due a week after that.
    No row is due at the idle build."""
    idle = node_messages(small_lake.runs["idle"])
    assert ran(idle) == {
        # the run history's own tables change every run: their views' tests check them
        name
        for name, (kind, _) in idle.items()
        if kind == "test" and "run_" in name
    }
    kinds = {kind for name, (kind, _) in idle.items() if name not in ran(idle)}
    assert {"model", "seed", "snapshot", "test", "unit_test"} <= kinds
    assert small_lake.versions_after_idle == small_lake.versions_before_idle


def test_the_run_history_says_which_nodes_were_skipped_and_why(small_lake) -> None:
    skipped = small_lake.skipped_in_history
    idle = node_messages(small_lake.runs["idle"])
    assert set(idle) - ran(idle) <= set(skipped)
    assert skipped["records"].startswith("skipped: nothing it reads changed since run ")


def test_new_records_files_run_what_they_reach_only(small_lake) -> None:
    """The third build's new files are all records: run skipping's new record, the backfilled
    snapshot and more of the backfill's events."""
    new_records = ran(node_messages(small_lake.runs["new_records"]))
    assert {"stg_records__changes", "int_record_states", "records", "profiles"} <= new_records
    assert {"stg_entity_names__updates", "entity_names", "tenants"}.isdisjoint(new_records)
