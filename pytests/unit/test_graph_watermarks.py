"""Where the identity graph's increment starts (profile_lake.identity.watermarks), and that the
versions of int_record_states past the watermark (each with what it replaces) give it what the
change feed of `records` did: incremental runs equal a full recompute, however many states runs
came between two graph runs."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profile_lake.identity import components_union_find
from profile_lake.identity.increments import resolve_incrementally, touched_identities
from profile_lake.identity.watermarks import (
    TenantVersions,
    batch_stamp,
    check_bound,
    reads_increment,
)

Image = tuple[str, ...]  # a live state's primary_id, then its related_ids


def tenant(**changes) -> TenantVersions:
    settled = {"graph_watermark": 7, "records_watermark": 9, "newest_batch": 9}
    return TenantVersions("acme", **(settled | changes))


def test_the_check_reads_past_the_graphs_watermark_else_past_records() -> None:
    assert check_bound(7, 9) == 7
    assert check_bound(7, None) == 7
    assert check_bound(None, 9) == 9  # every version up to records' watermark is applied
    assert check_bound(None, None) == -1  # no live record: every version


@pytest.mark.parametrize(
    ("changes", "incremental"),
    [
        ({}, True),
        ({"newest_batch": 7}, True),  # nothing new
        ({"graph_watermark": None}, False),  # new tenant, first run, table from before
        ({"shown": False}, False),  # a run stopped before the records MERGE
        ({"without_prior": True}, False),  # versions written before prior_is_live
        ({"newest_batch": 5}, False),  # states rebuilt from renumbered batches
        ({"newest_batch": None}, False),  # no states left
    ],
)
def test_when_a_tenant_reads_its_increment(changes: dict, incremental: bool) -> None:
    assert reads_increment(tenant(**changes)) is incremental


def test_the_stamp_is_the_newest_batch_once_records_shows_it() -> None:
    assert batch_stamp(tenant()) == 9
    assert batch_stamp(tenant(graph_watermark=None)) == 9
    # not shown: no stamp, so that the next run resolves the tenant whole again
    assert batch_stamp(tenant(shown=False)) is None
    assert batch_stamp(tenant(newest_batch=None)) is None


@dataclass
class States:
    """int_record_states in small: every record's versions, numbered by batch, each with the
    live state it replaces (None: deleted, or none)."""

    versions: list[tuple[int, int, Image | None, Image | None]] = field(default_factory=list)
    live: dict[int, Image] = field(default_factory=dict)

    def append(self, batch: int, record_id: int, image: Image | None) -> None:
        self.versions.append((batch, record_id, image, self.live.get(record_id)))
        if image is None:
            self.live.pop(record_id, None)
        else:
            self.live[record_id] = image

    def images_past(self, watermark: int) -> list[Image]:
        """The identities of every version past `watermark` and of what each replaces."""
        return [
            image
            for batch, _, new, prior in self.versions
            if batch > watermark
            for image in (new, prior)
            if image is not None
        ]

    def links(self) -> list[tuple[str, str]]:
        return [(image[0], identity) for image in self.live.values() for identity in image]


def full_components(links: list[tuple[str, str]]) -> dict[str, str]:
    return components_union_find([(a, b) for a, b in links if a != b], [a for a, _ in links])


IDENTITIES = st.sampled_from(["a", "b", "c", "d", "e", "f"])
CHANGE = st.tuples(
    st.integers(0, 4),
    st.one_of(st.none(), st.tuples(IDENTITIES, IDENTITIES), st.tuples(IDENTITIES)),
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(CHANGE, max_size=4), st.booleans()),
        min_size=1,
        max_size=6,
    )
)
def test_versions_past_the_watermark_equal_a_full_recompute(runs) -> None:
    """Each run appends a batch of versions; the graph runs after some of them only (a run
    stopped before it), then reads every version past its watermark."""
    states, stored, watermark = States(), {}, -1
    for batch, (changes, graph_runs) in enumerate(runs):
        for record_id, image in changes:
            states.append(batch, record_id, image)
        if not graph_runs and batch < len(runs) - 1:
            continue
        touched = touched_identities(states.images_past(watermark), {}, [])
        resolved, deleted = resolve_incrementally(stored, states.links(), touched)
        stored = {k: v for k, v in stored.items() if k not in deleted} | resolved
        watermark = batch
        assert stored == full_components(states.links())


def test_without_the_prior_a_changed_record_leaves_a_stale_link() -> None:
    """Record 1 linked a and b; its new version links c and d. Only with the identities of
    the state it replaces is the profile of a and b dropped."""
    states = States()
    states.append(0, 1, ("a", "b"))
    stored = full_components(states.links())
    states.append(1, 1, ("c", "d"))
    expected = full_components(states.links())
    post_images_only = [new for batch, _, new, _ in states.versions if batch > 0 and new]
    for images, correct in ((states.images_past(0), True), (post_images_only, False)):
        resolved, deleted = resolve_incrementally(
            stored, states.links(), touched_identities(images, {}, [])
        )
        result = {k: v for k, v in stored.items() if k not in deleted} | resolved
        assert (result == expected) is correct
