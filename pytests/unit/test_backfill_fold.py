"""The as-of rule of a legacy snapshot (SPEC.md section 6) in the order-independent fold: the
snapshot's row is the record's state at T, later events fold on top, earlier ones change
nothing; in any order, split over any runs, duplicated."""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profile_lake.jsonmerge import (
    SNAPSHOT,
    SNAPSHOT_SEQ,
    RecordState,
    apply_events_json,
    fold_events,
    merge_events_json,
    reference_fold,
    version_of,
)

KEYS = st.sampled_from(["a", "b", "c"])
SCALARS = st.one_of(st.integers(-3, 3), st.text("xy", max_size=2), st.just([1, 2]))


def _values(depth: int) -> st.SearchStrategy[Any]:
    leaves = st.one_of(SCALARS, st.none())
    if depth == 0:
        return leaves
    return st.one_of(leaves, st.dictionaries(KEYS, _values(depth - 1), max_size=3))


PAYLOADS = st.dictionaries(KEYS, _values(3), max_size=4)
SNAPSHOTS = st.dictionaries(KEYS, _values(2).filter(lambda v: v is not None), max_size=4)
# Events at minutes 0-6 with seq 0-2; snapshots at seq 3 (above every event's, as SNAPSHOT_SEQ
# is above every real seq), so an event at the snapshot's minute is "at or before T".
VERSIONS = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 2)), unique=True, max_size=8)


@st.composite
def histories(draw: st.DrawFn) -> tuple[list, list]:
    events: list[tuple] = []
    for version in draw(VERSIONS):
        op, payload = draw(
            st.one_of(
                st.tuples(st.just("upsert"), PAYLOADS),
                st.tuples(st.just("upsert"), PAYLOADS),
                st.tuples(st.just("delete"), st.none()),
            )
        )
        events.append((op, version, payload))
    for minute in draw(st.lists(st.integers(0, 6), unique=True, min_size=1, max_size=2)):
        events.append((SNAPSHOT, (minute, 3), draw(SNAPSHOTS)))
    duplicates = draw(st.lists(st.sampled_from(events), max_size=3))
    return events, draw(st.permutations(events + duplicates))


@settings(max_examples=200, deadline=None)
@given(histories())
def test_snapshot_and_events_in_any_order_equal_the_sorted_fold(history) -> None:
    events, arrival = history
    state = fold_events(arrival)
    assert (None if state.is_deleted() else state.payload()) == reference_fold(events)
    assert state.to_json() == fold_events(events).to_json()


@settings(max_examples=100, deadline=None)
@given(histories(), st.data())
def test_snapshot_split_across_runs_through_json(history, data: st.DataObject) -> None:
    events, arrival = history
    cuts = sorted(data.draw(st.lists(st.integers(0, len(arrival)), max_size=3)))
    state_json = None
    for run in (arrival[a:b] for a, b in pairwise([0, *cuts, len(arrival)])):
        json_events = [(op, v, None if p is None else json.dumps(p)) for op, v, p in run]
        state_json = apply_events_json(state_json, json_events)
    assert state_json == fold_events(events).to_json()


def test_the_as_of_rule() -> None:
    as_of = version_of("2026-01-10T00:00:00+00:00", SNAPSHOT_SEQ)
    before = version_of("2026-01-09T00:00:00+00:00", 0)
    at = version_of("2026-01-10T00:00:00+00:00", 5)
    after = version_of("2026-01-11T00:00:00+00:00", 0)
    snapshot = (SNAPSHOT, as_of, {"name": "Ann", "address": {"city": "Oslo", "zip": "0150"}})
    later = ("upsert", after, {"address": {"city": "Lyon"}, "tier": "gold"})
    # earlier events (an upsert, a delete, one at T itself) change nothing, in any order
    earlier = [
        ("upsert", before, {"name": "Old", "gone": 1}),
        ("delete", at, None),
    ]
    expected = {"name": "Ann", "address": {"city": "Lyon", "zip": "0150"}, "tier": "gold"}
    for order in ([snapshot, later, *earlier], [*earlier, later, snapshot], [later, snapshot]):
        state = fold_events(order)
        assert state.payload() == expected
        assert state.last_applied_version() == after
    # a delete after T removes the record; an upsert after that starts from {}
    deleted = fold_events([("delete", after, None), snapshot])
    assert deleted.is_deleted()
    recreated = fold_events(
        [snapshot, ("delete", after, None), ("upsert", (after[0] + 1, 0), {"x": 1})]
    )
    assert recreated.payload() == {"x": 1}
    # the snapshot alone: its row, nulls dropped; applied twice, the same state
    alone = merge_events_json(None, [(SNAPSHOT, as_of, '{"a": 1, "b": null, "c": {}}')])
    assert json.loads(alone.payload_json or "null") == {"a": 1, "c": {}}
    assert merge_events_json(alone.state_json, [(SNAPSHOT, as_of, '{"a": 2}')]) == alone


def test_a_snapshot_needs_an_object() -> None:
    with pytest.raises(TypeError, match="snapshot payload must be a JSON object"):
        RecordState().apply(SNAPSHOT, (1, SNAPSHOT_SEQ), None)
