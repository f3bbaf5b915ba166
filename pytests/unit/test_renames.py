"""Rename chains (SPEC §4, `identity_map`): execution order decides, not arrival."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from profile_lake.identity.renames import Rename, apply_renames, resolve_renames


def brute_force(renames: list[Rename], seen_ids: list[str] = ()) -> dict[str, str]:
    """The SPEC sentence, literally: one pass over every identity per rename."""
    ids = {identity for _, from_id, to_id in renames for identity in (from_id, to_id)}
    current = {identity: identity for identity in [*ids, *seen_ids]}
    for _, from_id, to_id in sorted(set(renames)):
        if from_id == to_id:
            continue
        for identity, canonical in current.items():
            if canonical == from_id:
                current[identity] = to_id
    return current


def test_chain_executed_forwards_resolves_to_the_last_identity() -> None:
    renames = [((3, 0), "c", "d"), ((1, 0), "a", "b"), ((2, 0), "b", "c")]  # arrival order
    assert resolve_renames(renames) == {"a": "d", "b": "d", "c": "d", "d": "d"}


def test_chain_executed_backwards_resolves_step_by_step() -> None:
    renames = [((1, 0), "c", "d"), ((2, 0), "b", "c"), ((3, 0), "a", "b")]
    assert resolve_renames(renames) == {"a": "b", "b": "c", "c": "d", "d": "d"}


def test_seq_orders_renames_with_the_same_timestamp() -> None:
    renames = [((5, 1), "b", "c"), ((5, 0), "a", "b")]
    assert resolve_renames(renames)["a"] == "c"


def test_cycle_ends_where_the_last_rename_points() -> None:
    assert resolve_renames([((1, 0), "a", "b"), ((2, 0), "b", "a")]) == {"a": "a", "b": "a"}
    assert resolve_renames([((1, 0), "b", "a"), ((2, 0), "a", "b")]) == {"a": "b", "b": "b"}
    three = [((1, 0), "a", "b"), ((2, 0), "b", "c"), ((3, 0), "c", "a")]
    assert resolve_renames(three) == {"a": "a", "b": "a", "c": "a"}


def test_no_op_rename_moves_nothing() -> None:
    assert resolve_renames([((1, 0), "a", "a")]) == {"a": "a"}
    # Not even an identity renamed away before: a -> a is a no-op (SPEC §2).
    assert resolve_renames([((1, 0), "a", "z"), ((2, 0), "a", "a")]) == {"a": "z", "z": "z"}


def test_rename_of_an_identity_already_renamed_away() -> None:
    # a left for z, so a -> b finds nothing canonicalized to a ...
    assert resolve_renames([((1, 0), "a", "z"), ((2, 0), "a", "b")]) == {
        "a": "z",
        "b": "b",
        "z": "z",
    }
    # ... except identities that arrived at a later (x -> a) and move on to b.
    renames = [((1, 0), "a", "z"), ((2, 0), "x", "a"), ((3, 0), "a", "b")]
    assert resolve_renames(renames) == {"a": "z", "b": "b", "x": "b", "z": "z"}


def test_seen_identities_never_renamed_map_to_themselves() -> None:
    result = resolve_renames([((1, 0), "a", "b"), ((1, 0), "a", "b")], ["a", "q"])
    assert result == {"a": "b", "b": "b", "q": "q"}
    assert resolve_renames([], ["q"]) == {"q": "q"}


def test_new_renames_in_a_later_run_extend_the_map() -> None:
    first = [((1, 0), "a", "b")]
    current = resolve_renames(first, ["x"])
    result = apply_renames(current, [((2, 0), "b", "c")], applied=first, seen_ids=["y"])
    assert result == {"a": "c", "b": "c", "c": "c", "x": "x", "y": "y"}


def test_late_rename_recomputes_from_the_history() -> None:
    history = [((1, 0), "c", "d"), ((3, 0), "a", "b")]
    current = resolve_renames(history)
    late = [((2, 0), "b", "c")]
    # Folding the late rename on top would send a and b to c; in order, a stops at b.
    assert apply_renames(current, late, applied=history) == {
        "a": "b",
        "b": "c",
        "c": "d",
        "d": "d",
    }


def test_incremental_form_needs_the_history_once_renames_are_folded_in() -> None:
    try:
        apply_renames({"a": "b", "b": "b"}, [((2, 0), "b", "c")])
    except ValueError as error:
        assert "applied" in str(error)
    else:
        raise AssertionError("a map with renames folded in needs its history")
    assert apply_renames({"a": "a"}, [((1, 0), "a", "b")]) == {"a": "b", "b": "b"}


def test_replayed_renames_change_nothing() -> None:
    history = [((1, 0), "a", "b"), ((2, 0), "b", "c")]
    current = resolve_renames(history)
    assert apply_renames(current, history, applied=history) == current


IDS = st.sampled_from(["a", "b", "c", "d", "e", "f"])
RENAMES = st.lists(
    st.tuples(st.tuples(st.integers(0, 4), st.integers(0, 2)), IDS, IDS),
    max_size=12,
    unique_by=lambda rename: rename[0],  # distinct (executed_ts, seq), as SPEC §2 promises
)


@settings(max_examples=300, deadline=None)
@given(RENAMES, st.lists(IDS | st.just("seen"), max_size=3), st.randoms(use_true_random=False))
def test_matches_brute_force_in_any_arrival_order(renames, seen, rng) -> None:
    expected = brute_force(renames, seen)
    arrival = renames + renames[: len(renames) // 2]
    rng.shuffle(arrival)
    assert resolve_renames(arrival, seen) == expected


@settings(max_examples=300, deadline=None)
@given(RENAMES, st.lists(st.integers(0, 12), max_size=3), st.randoms(use_true_random=False))
def test_runs_in_any_arrival_order_match_brute_force(renames, cuts, rng) -> None:
    arrival = list(renames)
    rng.shuffle(arrival)
    bounds = sorted(min(cut, len(arrival)) for cut in cuts)
    runs = [arrival[start:end] for start, end in pairwise([0, *bounds, len(arrival)])]
    current: dict[str, str] = {}
    applied: list[Rename] = []
    for run in runs:
        current = apply_renames(current, run, applied=applied)
        applied += run
    assert current == brute_force(renames)
