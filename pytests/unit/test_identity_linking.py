"""Profiles under linking rules (SPEC §5): ranking and the ordered union against a plain
reference, the per-component shortcut, and the worked examples of the issue."""

from __future__ import annotations

import functools
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profile_lake.identity.graph import components_union_find
from profile_lake.identity.linking import (
    BLOCKED,
    MAX_IDENTITIES,
    NAMESPACE_LIMIT,
    CutLink,
    Limits,
    Link,
    is_pressured,
    ordered_union,
    pressured_roots,
    rank_links,
    resolve_by_components,
    resolve_open_links,
)


def _compare(one: Link, other: Link) -> int:
    """SPEC §5's order written out: newer (event_ts, record_id) first, then smaller, larger."""
    for mine, theirs, newest_first in (
        (one.event_ts, other.event_ts, True),
        (one.record_id, other.record_id, True),
        (one.smaller, other.smaller, False),
        (one.larger, other.larger, False),
    ):
        if mine != theirs:
            before = mine > theirs if newest_first else mine < theirs
            return -1 if before else 1
    return 0


def reference(
    nodes: list[str], links: list[Link], blocked: set[str], limits: Limits
) -> tuple[dict[str, str], set[CutLink]]:
    """The rules applied literally to the whole graph: profiles as explicit sets."""
    every = set(nodes) | {end for link in links for end in (link.smaller, link.larger)}
    profile = {identity: frozenset([identity]) for identity in every}
    cut = set()
    open_links = []
    for link in links:
        if link.smaller in blocked or link.larger in blocked:
            cut.add(CutLink(link, BLOCKED))
        else:
            open_links.append(link)
    for link in sorted(open_links, key=functools.cmp_to_key(_compare)):
        one, other = profile[link.smaller], profile[link.larger]
        if one == other:
            continue
        joined = one | other
        namespaces = Counter(identity.split(":")[0] for identity in joined)
        broken = None
        if limits.max_identities is not None and len(joined) > limits.max_identities:
            broken = (MAX_IDENTITIES, None)
        else:
            for namespace in sorted(limits.namespace_limits):
                if namespaces[namespace] > limits.namespace_limits[namespace]:
                    broken = (NAMESPACE_LIMIT, namespace)
                    break
        if broken:
            cut.add(CutLink(link, *broken))
            continue
        for identity in joined:
            profile[identity] = joined
    return {identity: min(members) for identity, members in profile.items()}, cut


NAMESPACES = ["cookie", "crm", "email", "phone"]
identities = st.builds(
    lambda namespace, number: f"{namespace}:{number}",
    st.sampled_from(NAMESPACES),
    st.integers(0, 11),
)
raw_links = st.lists(
    st.tuples(identities, identities, st.integers(0, 4), st.sampled_from(["r1", "r2", "r3"])),
    max_size=40,
)
limits_strategy = st.builds(
    Limits,
    st.none() | st.integers(1, 6),
    st.dictionaries(st.sampled_from(NAMESPACES), st.integers(1, 3), max_size=3),
)


def as_links(raw: list[tuple[str, str, int, str]]) -> list[Link]:
    """Distinct links, each with the newest recency among its duplicates (as Spark groups)."""
    newest: dict[tuple[str, str], Link] = {}
    for one, other, event_ts, record_id in raw:
        if one == other:
            continue
        link = Link.of(one, other, event_ts, record_id)
        key = (link.smaller, link.larger)
        current = newest.get(key)
        if current is None or (event_ts, record_id) > (current.event_ts, current.record_id):
            newest[key] = link
    return list(newest.values())


@settings(max_examples=400, deadline=None)
@given(
    raw_links, st.lists(identities, max_size=6), st.sets(identities, max_size=3), limits_strategy
)
def test_resolve_by_components_equals_the_literal_rules(raw, nodes, blocked, limits) -> None:
    links = as_links(raw)
    expected_profiles, expected_cut = reference(nodes, links, blocked, limits)
    found = resolve_by_components(nodes, links, blocked, limits)
    assert found.profiles == expected_profiles
    assert len(found.cut) == len(expected_cut)
    assert set(found.cut) == expected_cut


@settings(max_examples=200, deadline=None)
@given(raw_links, st.lists(identities, max_size=6), limits_strategy)
def test_one_call_gives_the_plain_components_beside_the_profiles(raw, nodes, limits) -> None:
    """What a tenant's one pandas call returns: each identity's plain component (what the
    incremental runs take affected identities by) and its profile, inside that component."""
    links = as_links(raw)
    found = resolve_open_links(nodes, links, limits)
    assert found.components == components_union_find(
        [(link.smaller, link.larger) for link in links], nodes
    )
    assert found.resolution.profiles == resolve_by_components(nodes, links, set(), limits).profiles
    for identity, profile in found.resolution.profiles.items():
        assert found.components[profile] == found.components[identity]


@settings(max_examples=300, deadline=None)
@given(raw_links, st.randoms(use_true_random=False))
def test_ranking_follows_the_spec_order_whatever_the_input_order(raw, rng) -> None:
    links = as_links(raw)
    expected = sorted(links, key=functools.cmp_to_key(_compare))
    shuffled = list(links)
    rng.shuffle(shuffled)
    assert rank_links(shuffled) == expected


@settings(max_examples=300, deadline=None)
@given(raw_links, limits_strategy)
def test_without_limits_profiles_are_the_plain_components(raw, limits) -> None:
    links = as_links(raw)
    plain = components_union_find([(link.smaller, link.larger) for link in links])
    assert resolve_by_components([], links, set(), Limits()).profiles == plain
    # a component within every limit keeps every link whatever the limits
    found = resolve_by_components([], links, set(), limits)
    members: dict[str, list[str]] = {}
    for identity, component in plain.items():
        members.setdefault(component, []).append(identity)
    for component, part in members.items():
        if not is_pressured(part, limits):
            assert all(found.profiles[identity] == component for identity in part)


@settings(max_examples=300, deadline=None)
@given(raw_links, limits_strategy)
def test_pressure_counted_for_all_components_at_once_is_is_pressured(raw, limits) -> None:
    links = as_links(raw)
    plain = components_union_find([(link.smaller, link.larger) for link in links])
    identities = np.asarray(sorted(plain), dtype=object)
    position = {identity: index for index, identity in enumerate(identities)}
    labels = np.asarray([position[plain[identity]] for identity in identities], dtype=np.int64)
    pressured = pressured_roots(identities, labels, limits)
    members: dict[str, list[str]] = {}
    for identity, component in plain.items():
        members.setdefault(component, []).append(identity)
    for component, part in members.items():
        assert pressured[position[component]] == is_pressured(part, limits)


@settings(max_examples=300, deadline=None)
@given(raw_links, limits_strategy)
def test_a_cut_links_ends_end_in_different_profiles(raw, limits) -> None:
    found = resolve_by_components([], as_links(raw), set(), limits)
    for cut in found.cut:
        assert found.profiles[cut.link.smaller] != found.profiles[cut.link.larger]


@settings(max_examples=300, deadline=None)
@given(raw_links, limits_strategy, st.integers(1, 4))
def test_a_pass_per_bucket_of_whole_components_equals_one_pass(raw, limits, buckets) -> None:
    """What the Spark side relies on: components are spread over buckets (by a hash of their
    id) and each bucket gets one pass over all its links."""
    links = as_links(raw)
    components = components_union_find([(link.smaller, link.larger) for link in links])
    by_bucket: dict[int, list[Link]] = {}
    for link in links:
        by_bucket.setdefault(hash(components[link.smaller]) % buckets, []).append(link)
    whole = ordered_union((), rank_links(links), limits)
    profiles: dict[str, str] = {}
    cut: list[CutLink] = []
    for part in by_bucket.values():
        found = ordered_union((), rank_links(part), limits)
        profiles.update(found.profiles)
        cut += found.cut
    assert profiles == whole.profiles
    assert sorted(cut) == sorted(whole.cut)


def collapse(people: int) -> tuple[list[str], list[Link]]:
    """Each person one record r<i> at minute i: primary their email, related their cookie and
    the shared test email."""
    nodes, links = [], []
    for person in range(people):
        email, cookie = f"email:p{person:04d}@x.test", f"cookie:c{person:04d}"
        nodes.append(email)
        links += [
            Link.of(email, cookie, person, f"r{person:04d}"),
            Link.of(email, "email:test@example.com", person, f"r{person:04d}"),
        ]
    return nodes, links


def test_the_collapse_by_hand() -> None:
    """Three people. Blocked: the test email's links are cut, every person keeps their cookie.
    Limited to one email: newest first, r0002's two links (cookie:c0002 < email:test..) join
    p0002 to its cookie, then its test-email link would put two emails together (cut); r0001
    and r0000 go the same way. The test email stays a profile of its own both times."""
    nodes, links = collapse(3)
    person_profiles = {
        f"email:p{person:04d}@x.test": f"cookie:c{person:04d}" for person in range(3)
    } | {f"cookie:c{person:04d}": f"cookie:c{person:04d}" for person in range(3)}
    expected = person_profiles | {"email:test@example.com": "email:test@example.com"}
    blocked = resolve_by_components(nodes, links, {"email:test@example.com"}, Limits())
    limited = resolve_by_components(nodes, links, set(), Limits(None, {"email": 1}))
    assert blocked.profiles == limited.profiles == expected
    assert {(cut.rule, cut.link.record_id) for cut in blocked.cut} == {
        (BLOCKED, f"r000{person}") for person in range(3)
    }
    assert [(cut.rule, cut.namespace, cut.link.record_id) for cut in limited.cut] == [
        (NAMESPACE_LIMIT, "email", "r0002"),
        (NAMESPACE_LIMIT, "email", "r0001"),
        (NAMESPACE_LIMIT, "email", "r0000"),
    ]
    plain = resolve_by_components(nodes, links, set(), Limits())
    assert set(plain.profiles.values()) == {"cookie:c0000"}
    assert plain.cut == []


def test_the_device_goes_with_the_newer_crm_link() -> None:
    older = Link.of("crm:1", "device:d", 1, "r1")
    newer = Link.of("crm:2", "device:d", 2, "r2")
    found = resolve_by_components([], [older, newer], set(), Limits(None, {"crm": 1}))
    assert found.profiles == {"crm:1": "crm:1", "crm:2": "crm:2", "device:d": "crm:2"}
    assert found.cut == [CutLink(older, NAMESPACE_LIMIT, "crm")]


def test_max_identities_is_checked_before_namespace_limits() -> None:
    """email:a + email:b breaks both limits; the cut names max_identities. Then the crm link
    breaks only crm's limit."""
    links = [Link.of("email:a", "email:b", 2, "r2"), Link.of("crm:1", "crm:2", 1, "r1")]
    found = ordered_union([], rank_links(links), Limits(1, {"email": 1}))
    assert [(cut.rule, cut.namespace) for cut in found.cut] == [
        (MAX_IDENTITIES, None),
        (MAX_IDENTITIES, None),
    ]
    found = ordered_union([], rank_links(links), Limits(3, {"email": 1, "crm": 1}))
    assert [(cut.rule, cut.namespace) for cut in found.cut] == [
        (NAMESPACE_LIMIT, "email"),
        (NAMESPACE_LIMIT, "crm"),
    ]


def test_a_link_joins_two_distinct_identities() -> None:
    with pytest.raises(ValueError, match="twice"):
        Link.of("email:a", "email:a", 1, "r")
