"""RFC 7396 merge patch and the order-independent record state (SPEC §4, `records`)."""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profile_lake.jsonmerge import (
    RecordState,
    apply_events_json,
    fold_events,
    merge_events_json,
    merge_patch,
    reference_fold,
    version_of,
)

# RFC 7396, Appendix A: (original, patch, result), all 15 rows.
RFC_7396_EXAMPLES = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("original", "patch", "result"), RFC_7396_EXAMPLES)
def test_merge_patch_rfc_7396_appendix_a(original: Any, patch: Any, result: Any) -> None:
    before = json.dumps([original, patch])
    assert merge_patch(original, patch) == result
    assert json.dumps([original, patch]) == before  # inputs untouched


def _json_free_of_nulls(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, dict):
        return all(_json_free_of_nulls(item) for item in value.values())
    return True


# Rows where both sides are objects and the original can be built by an upsert into {}.
RECORD_EXAMPLES = [
    row
    for row in RFC_7396_EXAMPLES
    if isinstance(row[0], dict) and isinstance(row[1], dict) and _json_free_of_nulls(row[0])
]


@pytest.mark.parametrize(("original", "patch", "result"), RECORD_EXAMPLES)
def test_record_state_rfc_examples_in_both_orders(original: Any, patch: Any, result: Any) -> None:
    events = [("upsert", (1, 0), original), ("upsert", (2, 0), patch)]
    assert fold_events(events).payload() == result
    assert fold_events(reversed(events)).payload() == result


def test_late_older_patch_keeps_fields_newer_patches_did_not_touch() -> None:
    state = RecordState()
    state.apply("upsert", (20, 0), {"name": "new", "tags": ["x"]})
    state.apply("upsert", (10, 0), {"name": "old", "city": "Oslo"})
    assert state.payload() == {"name": "new", "tags": ["x"], "city": "Oslo"}
    assert state.last_applied_version() == (20, 0)


def test_delete_then_upsert_starts_from_empty_in_any_order() -> None:
    events = [
        ("upsert", (1, 0), {"a": 1, "b": {"c": 2}}),
        ("delete", (2, 0), None),
        ("upsert", (3, 0), {"b": {"d": 3}}),
    ]
    for order in (events, events[::-1], [events[1], events[2], events[0]]):
        assert fold_events(order).payload() == {"b": {"d": 3}}
    assert reference_fold(events) == {"b": {"d": 3}}


def test_delete_wins_over_older_upserts_and_empty_state() -> None:
    state = fold_events([("delete", (5, 0), None), ("upsert", (4, 0), {"a": 1})])
    assert state.is_deleted()
    assert state.payload() == {}
    assert state.last_applied_version() == (5, 0)
    assert RecordState().is_deleted()
    assert RecordState().last_applied_version() is None
    assert RecordState.from_json(None) == RecordState()


def test_seq_breaks_ties_within_a_timestamp() -> None:
    events = [("upsert", (7, 2), {"a": "second"}), ("upsert", (7, 1), {"a": "first"})]
    assert fold_events(events).payload() == {"a": "second"}


def test_later_scalar_under_older_ancestor_set_survives() -> None:
    # The flaw fixed in the draft design: `a.c` is an object (merge@1), then a scalar (set@5);
    # a late set of the parent `a` @3 must not erase the newer `a.c` set @5.
    events = [
        ("upsert", (1, 0), {"a": {"c": {"x": 1}}}),
        ("upsert", (5, 0), {"a": {"c": 5}}),
        ("upsert", (3, 0), {"a": "scalar"}),
    ]
    assert fold_events(events).payload() == reference_fold(events) == {"a": {"c": 5}}


def test_empty_object_patch_turns_scalar_into_empty_object() -> None:
    events = [("upsert", (1, 0), {"a": 1}), ("upsert", (2, 0), {"a": {}})]
    assert fold_events(events[::-1]).payload() == {"a": {}}


def test_inputs_and_outputs_are_not_aliased() -> None:
    payload = {"a": [1, {"b": 2}], "c": {"d": 1}}
    state = fold_events([("upsert", (1, 0), payload)])
    payload["a"].append(3)
    payload["c"]["d"] = 9
    out = state.payload()
    assert out == {"a": [1, {"b": 2}], "c": {"d": 1}}
    out["a"].append(4)
    assert state.payload() == {"a": [1, {"b": 2}], "c": {"d": 1}}


def test_bad_events_are_rejected() -> None:
    with pytest.raises(ValueError, match="op must be"):
        RecordState().apply("merge", (1, 0), {})
    with pytest.raises(TypeError, match="JSON object"):
        RecordState().apply("upsert", (1, 0), None)
    with pytest.raises(ValueError, match="epoch_micros, seq"):
        RecordState().apply("upsert", (1,), {})


def test_version_of_is_epoch_micros_in_utc() -> None:
    assert version_of("1970-01-01T00:00:01Z", 4) == (1_000_000, 4)
    assert version_of("2024-01-01T02:00:00.5+02:00", 0) == version_of("2024-01-01T00:00:00.5Z", 0)
    with pytest.raises(ValueError, match="zone"):
        version_of("2024-01-01T00:00:00", 0)


def test_json_entry_point_returns_state_payload_and_version() -> None:
    merged = merge_events_json(
        None,
        [
            ("upsert", (2, 0), '{"b": {"y": 2}, "a": 1}'),
            ("upsert", (1, 0), '{"c": "é"}'),
        ],
    )
    assert merged.payload_json == '{"a":1,"b":{"y":2},"c":"é"}'
    assert merged.last_version == (2, 0)
    deleted = merge_events_json(merged.state_json, [("delete", (3, 0), None)])
    assert deleted.payload_json is None
    again = apply_events_json(deleted.state_json, [("upsert", (1, 5), '{"late": true}')])
    assert RecordState.from_json(again).is_deleted()
    assert RecordState.from_json(again).last_applied_version() == (3, 0)


def test_payload_and_state_text_keep_numbers_and_text_exactly() -> None:
    # what a faster codec must not change: integers past 64 bits, float spellings, non-ASCII
    payload = (
        '{"big": 123456789012345678901234567890, "f": 0.1, "e": 1e+16, "neg": -0.0,'
        ' "s": "na\u00efve \u2603 \\u0000", "z": [1.5, {"b": 2, "a": 1}]}'
    )
    merged = merge_events_json(None, [("upsert", (1, 0), payload)])
    assert merged.payload_json == json.dumps(
        json.loads(payload), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    assert '"big":123456789012345678901234567890' in merged.payload_json
    assert '"e":1e+16' in merged.payload_json and '"neg":-0.0' in merged.payload_json
    again = merge_events_json(merged.state_json, [("upsert", (0, 0), '{"older": true}')])
    assert json.loads(again.payload_json) == {**json.loads(payload), "older": True}


def test_wide_payloads_merge_in_the_worst_order() -> None:
    """1,200 fields patched by 20 runs, newest first. Its speed is measured side by side in
    bench/bench_json_merge_udf.py, not here: a timed test fails on a loaded machine."""
    wide = {f"f{i:04d}": {"v": i, "tags": [i, i + 1], "n": {"k": str(i)}} for i in range(1200)}
    patches = [
        json.dumps({f"f{j:04d}": {"v": -run, "n": None} for j in range(run, 1200, 7)})
        for run in range(20)
    ]
    events = [("upsert", (0, 0), json.dumps(wide))]
    events += [("upsert", (run + 1, 0), patch) for run, patch in enumerate(patches)]
    state_json = None
    for event in reversed(events):  # one event per run, newest first: the worst order
        state_json = apply_events_json(state_json, [event])
    expected = reference_fold([(op, v, json.loads(p)) for op, v, p in events])
    assert RecordState.from_json(state_json).payload() == expected


# ---------------------------------------------------------------- properties

KEYS = st.sampled_from("abcd")
SCALARS = st.one_of(
    st.integers(-3, 3),
    st.text("xy", max_size=2),
    st.lists(st.one_of(st.integers(0, 2), st.dictionaries(KEYS, st.integers(0, 2))), max_size=2),
)


def _values(depth: int) -> st.SearchStrategy[Any]:
    """Patch values: scalars, arrays, null, and objects nested up to `depth` levels."""
    leaves = st.one_of(SCALARS, st.none())
    if depth == 0:
        return leaves
    return st.one_of(leaves, st.dictionaries(KEYS, _values(depth - 1), max_size=3))


PAYLOADS = st.dictionaries(KEYS, _values(3), max_size=4)
# Small ranges make equal timestamps (seq breaks the tie) frequent.
VERSIONS = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 2)), unique=True, max_size=9)


@st.composite
def event_histories(draw: st.DrawFn) -> tuple[list, list]:
    """Events with distinct versions, then the same events shuffled and duplicated."""
    versions = draw(VERSIONS)
    events = []
    for version in versions:
        op, payload = draw(
            st.one_of(
                st.tuples(st.just("upsert"), PAYLOADS),
                st.tuples(st.just("upsert"), PAYLOADS),
                st.tuples(st.just("delete"), st.none()),
            )
        )
        events.append((op, version, payload))
    duplicates = draw(st.lists(st.sampled_from(events), max_size=4)) if events else []
    arrival = draw(st.permutations(events + duplicates))
    return events, arrival


@settings(max_examples=300, deadline=None)
@given(event_histories())
def test_any_order_and_duplication_equals_the_sorted_fold(histories: tuple[list, list]) -> None:
    events, arrival = histories
    expected = reference_fold(events)
    state = fold_events(arrival)
    assert (None if state.is_deleted() else state.payload()) == expected
    versions = [event[1] for event in events]
    assert state.last_applied_version() == (max(versions) if versions else None)
    # The state itself does not depend on the order: same events, same stored string.
    assert state.to_json() == fold_events(events).to_json()


@settings(max_examples=200, deadline=None)
@given(event_histories(), st.data())
def test_split_across_runs_through_json(histories: tuple[list, list], data: st.DataObject) -> None:
    events, arrival = histories
    cuts = sorted(data.draw(st.lists(st.integers(0, len(arrival)), max_size=3)))
    runs = [arrival[start:end] for start, end in pairwise([0, *cuts, len(arrival)])]
    state_json = None
    for run in runs:
        json_events = [(op, v, None if p is None else json.dumps(p)) for op, v, p in run]
        state_json = apply_events_json(state_json, json_events)
    expected = reference_fold(events)
    final = merge_events_json(state_json, [])
    assert final.payload_json == (
        None if expected is None else json.dumps(expected, sort_keys=True, separators=(",", ":"))
    )
    assert final.state_json == fold_events(events).to_json()


@settings(max_examples=150, deadline=None)
@given(event_histories(), event_histories())
def test_round_trip_preserves_result_and_further_applies(
    first: tuple[list, list], second: tuple[list, list]
) -> None:
    events, arrival = first
    # Same timestamps, other seqs: the second history interleaves with the first, so some of
    # its events are older than what the restored state already holds.
    later = [(op, (v[0], v[1] + 10), p) for op, v, p in second[0]]
    state = fold_events(arrival)
    restored = RecordState.from_json(state.to_json())
    assert restored == state
    assert restored.payload() == state.payload()
    assert restored.to_json() == state.to_json()
    fold_events(later[::-1], restored)
    assert (None if restored.is_deleted() else restored.payload()) == reference_fold(events + later)


@settings(max_examples=150, deadline=None)
@given(event_histories())
def test_applying_everything_again_changes_nothing(histories: tuple[list, list]) -> None:
    _, arrival = histories
    state = fold_events(arrival)
    once = state.to_json()
    assert fold_events(arrival, state).to_json() == once
    assert (
        apply_events_json(
            once, [(op, v, None if p is None else json.dumps(p)) for op, v, p in arrival]
        )
        == once
    )


@settings(max_examples=300, deadline=None)
@given(_values(3), _values(3))
def test_merge_patch_is_idempotent_and_pure(target: Any, patch: Any) -> None:
    before = json.dumps([target, patch])
    once = merge_patch(target, patch)
    assert merge_patch(once, patch) == once
    assert json.dumps([target, patch]) == before
