"""The look-up of records' prior states (int_record_states): the newest stored version of
each touched record, with the touched keys broadcast up to a bound and shuffled beyond it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from profile_lake.spark.records import prior_states

pytestmark = pytest.mark.integration

STATES_SCHEMA = "tenant_id string, record_id string, last_ingest_batch_id bigint, state_json string"
CHANGES_SCHEMA = "tenant_id string, record_id string, ingest_batch_id bigint"


@pytest.fixture
def no_automatic_broadcast(spark) -> Iterator[None]:
    """Tiny test tables would be broadcast by size alone: only the explicit choice may."""
    previous = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    yield
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", previous)


@pytest.fixture
def states(spark):
    return spark.createDataFrame(
        [
            ("acme", "r1", 1, "r1 v1"),
            ("acme", "r1", 2, "r1 v2"),
            ("acme", "r2", 1, "r2 v1"),
            ("globex", "r1", 3, "globex r1 v3"),
        ],
        STATES_SCHEMA,
    )


@pytest.fixture
def changes(spark):
    # r1 twice (one record), r3 new; globex's r1 untouched: the same id in another tenant
    return spark.createDataFrame(
        [("acme", "r1", 5), ("acme", "r1", 5), ("acme", "r3", 5)], CHANGES_SCHEMA
    )


def _plan(frame) -> str:
    return frame._jdf.queryExecution().executedPlan().toString()


@pytest.mark.parametrize("broadcast_max_changes", [0, 2, 3, 1000])
def test_newest_state_of_each_touched_record(
    states, changes, no_automatic_broadcast, broadcast_max_changes
) -> None:
    found = prior_states(states, changes, broadcast_max_changes=broadcast_max_changes)
    assert sorted(tuple(row) for row in found.collect()) == [("acme", "r1", 2, "r1 v2")]


def test_keys_broadcast_up_to_the_bound(states, changes, no_automatic_broadcast) -> None:
    plan = _plan(prior_states(states, changes, broadcast_max_changes=3))
    assert "BroadcastHashJoin" in plan and "SortMergeJoin" not in plan, plan


@pytest.mark.parametrize("broadcast_max_changes", [0, 2])
def test_states_shuffled_beyond_the_bound_or_at_0(
    states, changes, no_automatic_broadcast, broadcast_max_changes
) -> None:
    plan = _plan(prior_states(states, changes, broadcast_max_changes=broadcast_max_changes))
    assert "SortMergeJoin" in plan and "BroadcastHashJoin" not in plan, plan
