"""Incremental profile resolution: recomputing only the affected components equals a full
recompute, over random runs of record changes and renames (late ones included)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from profile_lake.identity import components_union_find, resolve_renames
from profile_lake.identity.increments import (
    affected_identities,
    links_within,
    resolve_incrementally,
    touched_identities,
)
from profile_lake.identity.renames import Rename

Image = tuple[str, tuple[str, ...]]  # a record's primary_id and related_ids


@dataclass
class Lake:
    """Live records, the rename history and every identity seen: what the model reads."""

    records: dict[int, Image] = field(default_factory=dict)
    renames: list[Rename] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)

    def identity_map(self) -> dict[str, str]:
        return resolve_renames(self.renames, self.seen)

    def links(self) -> list[tuple[str, str]]:
        canonical = self.identity_map()
        return [
            (canonical[primary], canonical[identity])
            for primary, related in self.records.values()
            for identity in (primary, *related)
        ]

    def apply(self, operation: tuple) -> None:
        match operation:
            case ("upsert", record_id, primary, related):
                self.records[record_id] = (primary, tuple(related))
                self.seen.update((primary, *related))
            case ("delete", record_id):
                self.records.pop(record_id, None)
            case ("rename", version, from_id, to_id):
                self.renames.append(((version, len(self.renames)), from_id, to_id))


def full_components(links: list[tuple[str, str]]) -> dict[str, str]:
    return components_union_find([(a, b) for a, b in links if a != b], [a for a, _ in links])


def changes(before: Lake, after: Lake) -> tuple[list[tuple[str, ...]], list[tuple[str, str]]]:
    """What the two change feeds hold between two states: the images of changed records and of
    changed identity_map rows, before and after."""
    images = []
    for record_id in before.records.keys() | after.records.keys():
        old, new = before.records.get(record_id), after.records.get(record_id)
        if old != new:
            images += [(image[0], *image[1]) for image in (old, new) if image is not None]
    old_map, new_map = before.identity_map(), after.identity_map()
    map_rows = []
    for identity, canonical in new_map.items():
        if old_map.get(identity) != canonical:
            map_rows.append((identity, canonical))
            if identity in old_map:
                map_rows.append((identity, old_map[identity]))
    return images, map_rows


IDENTITIES = st.sampled_from(["a", "b", "c", "d", "e", "f", "g"])
OPERATIONS = st.one_of(
    st.tuples(
        st.just("upsert"),
        st.integers(0, 5),
        IDENTITIES,
        st.lists(IDENTITIES, max_size=2),
    ),
    st.tuples(st.just("delete"), st.integers(0, 5)),
    st.tuples(st.just("rename"), st.integers(0, 30), IDENTITIES, IDENTITIES),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(OPERATIONS, max_size=6), min_size=1, max_size=5))
def test_incremental_runs_equal_a_full_recompute(runs: list[list[tuple]]) -> None:
    lake, stored = Lake(), {}
    for operations in runs:
        before = Lake(dict(lake.records), list(lake.renames), set(lake.seen))
        for operation in operations:
            lake.apply(operation)
        images, map_rows = changes(before, lake)
        touched = touched_identities(images, lake.identity_map(), map_rows)
        resolved, deleted = resolve_incrementally(stored, lake.links(), touched)
        stored = {k: v for k, v in stored.items() if k not in deleted} | resolved
        assert stored == full_components(lake.links())


def test_a_run_recomputes_only_the_affected_profiles() -> None:
    stored = {"a": "a", "b": "a", "c": "c", "d": "c", "e": "e"}
    assert affected_identities({"b"}, stored) == {"a", "b"}
    assert affected_identities({"b", "x"}, stored) == {"a", "b", "x"}
    assert affected_identities(set(), stored) == set()
    links = [("a", "b"), ("c", "d"), ("b", "x"), ("e", "e")]
    assert links_within(links, {"a", "b", "x"}) == [("a", "b"), ("b", "x")]
    resolved, deleted = resolve_incrementally(stored, [("a", "b"), ("c", "d"), ("e", "e")], {"e"})
    assert (resolved, deleted) == ({"e": "e"}, set())


def test_a_new_link_joins_two_stored_profiles_in_one_run() -> None:
    stored = {"a": "a", "b": "a", "c": "c", "d": "c"}
    links = [("a", "b"), ("c", "d"), ("b", "d")]  # a new record links b and d
    resolved, deleted = resolve_incrementally(
        stored, links, touched_identities([("b", "d")], {}, [])
    )
    assert resolved == {"a": "a", "b": "a", "c": "a", "d": "a"}
    assert deleted == set()


def test_a_deleted_record_splits_a_profile_and_drops_unlinked_identities() -> None:
    stored = {"a": "a", "b": "a", "c": "a"}
    # records were (a, [b]) and (b, [c]); (a, [b]) is deleted
    touched = touched_identities([("a", "b")], {}, [])
    resolved, deleted = resolve_incrementally(stored, [("b", "b"), ("b", "c")], touched)
    assert resolved == {"b": "b", "c": "b"}
    assert deleted == {"a"}


def test_a_late_rename_needs_the_old_canonical_identity_of_the_moved_rows() -> None:
    """x and y were renamed into q1 and q2, which record r1 (x, y) therefore linked; a late
    rename (executed before those) sends x and y to w instead, and q1 -> q1, q2 -> q2 rows do
    not change. Without the identity_map rows' before images, q2's profile keeps q1."""
    before = Lake({1: ("x", ("y",)), 2: ("q1", ("s1",)), 3: ("q2", ("s2",))})
    before.seen = {"x", "y", "q1", "q2", "s1", "s2"}
    before.renames = [((2, 0), "x", "q1"), ((2, 1), "y", "q2")]
    after = Lake(dict(before.records), [*before.renames], set(before.seen))
    after.renames += [((1, 0), "x", "w"), ((1, 1), "y", "w")]
    assert (after.identity_map()["x"], after.identity_map()["q1"]) == ("w", "q1")
    stored = full_components(before.links())
    assert set(stored.values()) == {"q1"}
    expected = full_components(after.links())
    assert expected["s2"] == "q2"

    images, map_rows = changes(before, after)
    assert images == []
    without_before_images = [row for row in map_rows if row[1] == after.identity_map()[row[0]]]
    for rows, correct in ((map_rows, True), (without_before_images, False)):
        touched = touched_identities(images, after.identity_map(), rows)
        resolved, deleted = resolve_incrementally(stored, after.links(), touched)
        result = {k: v for k, v in stored.items() if k not in deleted} | resolved
        assert (result == expected) is correct
