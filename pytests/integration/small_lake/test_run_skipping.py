"""A run skips every node whose inputs did not move since its last success (docs/run-state.md).

One small lake, three whole builds: the first; one with nothing new (every node skipped, the
clock's segments too while no profile's next_change_ts has come, no table written, the run
history saying why); one with a new records file (what it
reaches runs, the names' branch stays skipped). That an edit to any project file runs every
node again is the planner's (pytests/unit/test_run_planner.py); that every node then runs
incrementally over a lake with nothing new and equals a full refresh, the equivalence lake's
run eight days on (test_incremental_marts.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytests.support.dbt_runner import DbtRun, run_dbt
from pytests.support.landing import write_landing

pytestmark = pytest.mark.integration

SCHEMA = "run_skipping"


def record(tenant: str, record_id: str, primary: str, related: list[str], minute: int) -> dict:
    return {
        "tenant_id": tenant,
        "record_id": record_id,
        "op": "upsert",
        "event_ts": f"2026-01-01T00:{minute:02d}:00+00:00",
        "seq": 0,
        "record_type": "profile",
        "primary_id": primary,
        "related_ids": related,
        "payload": {"n": minute},
    }


FIRST = {
    "records": [
        record("acme", "a1", "email:a1@x.test", ["cookie:a1"], 1),
        record("acme", "a2", "email:a2@x.test", ["cookie:a1"], 2),
        record("globex", "g1", "email:g1@x.test", [], 3),
    ],
    "id_mutations": [
        {
            "tenant_id": "acme",
            "from_id": "cookie:a1",
            "to_id": "cookie:a9",
            "executed_ts": "2026-01-01T01:00:00+00:00",
            "seq": 0,
        }
    ],
    "entity_names": [
        {
            "tenant_id": "acme",
            "id": "email:a1@x.test",
            "name": "Ann",
            "updated_ts": "2026-01-01T00:00:00+00:00",
            "seq": 0,
        }
    ],
}


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


def versions(spark, schemas: list[str]) -> dict[str, int]:
    found = {}
    for schema in schemas:
        views = {row["viewName"] for row in spark.sql(f"show views in {schema}").collect()}
        for row in spark.sql(f"show tables in {schema}").collect():
            if row["isTemporary"] or row["tableName"] in views:
                continue
            table = f"{schema}.{row['tableName']}"
            found[table] = spark.sql(f"describe history {table} limit 1").first()["version"]
    return found


@pytest.fixture(scope="module")
def skipping_lake(spark, lake_home: Path, tmp_path_factory) -> dict:
    landing = tmp_path_factory.mktemp("run-skipping-landing")
    env = {"PROFILE_LAKE_SCHEMA": SCHEMA, "PROFILE_LAKE_LANDING": str(landing)}

    def build() -> DbtRun:
        return run_dbt(
            ["build"],
            env=env,
            target_path=lake_home / "target" / SCHEMA,
            run_history=True,
            unit_tests=True,
        )

    schemas = [SCHEMA, f"{SCHEMA}_staging", f"{SCHEMA}_intermediate"]
    write_landing(landing, FIRST, "part-00001")
    first = build()
    before = versions(spark, schemas)
    idle = build()
    after_idle = versions(spark, schemas)
    write_landing(landing, {"records": [record("globex", "g2", "email:g2@x.test", [], 9)]}, "p2")
    one_file = build()  # a whole build, every model and data test: the lake ends as a user's
    return {
        "first": node_messages(first),
        "idle": node_messages(idle),
        "one_file": node_messages(one_file),
        "before": before,
        "after_idle": after_idle,
        "skipped_in_history": {
            row["name"]: row["message"]
            for row in spark.sql(
                f"select node_name as name, message from {SCHEMA}.run_node_history "
                "where message like 'skipped:%'"
            ).collect()
        },
    }


def test_a_first_build_runs_every_node(skipping_lake) -> None:
    assert ran(skipping_lake["first"]) == set(skipping_lake["first"])


def test_a_build_with_nothing_new_skips_every_node_no_row_of_which_is_due(skipping_lake) -> None:
    """profile_segments reads the clock, but its rows say when the clock can change them
    (next_change_ts): the lake's records are from January, so none ever will."""
    idle = skipping_lake["idle"]
    assert ran(idle) == {
        # the run history's own tables change every run: their views' tests check them
        name
        for name, (kind, _) in idle.items()
        if kind == "test" and "run_" in name
    }
    kinds = {kind for name, (kind, _) in idle.items() if name not in ran(idle)}
    assert {"model", "seed", "snapshot", "test", "unit_test"} <= kinds
    assert skipping_lake["after_idle"] == skipping_lake["before"]


def test_the_run_history_says_which_nodes_were_skipped_and_why(skipping_lake) -> None:
    skipped = skipping_lake["skipped_in_history"]
    assert set(skipping_lake["idle"]) - ran(skipping_lake["idle"]) <= set(skipped)
    assert skipped["records"].startswith("skipped: nothing it reads changed since run ")


def test_a_new_records_file_runs_what_it_reaches_only(skipping_lake) -> None:
    one_file = ran(skipping_lake["one_file"])
    assert {"stg_records__changes", "int_record_states", "records", "profiles"} <= one_file
    assert {"stg_entity_names__updates", "entity_names", "tenants"}.isdisjoint(one_file)
