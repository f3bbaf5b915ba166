"""Profiles under linking rules (SPEC §5): which links are kept, and which rule cut the others.

Every canonical identity of a live record starts as a profile of its own. Links with a blocked
identity at either end are cut (`blocked`). The others are taken most recent first (recency:
the largest `(event_ts, record_id)` of the live records carrying the link), ties in ascending
order of their smaller identity, then their larger one (:func:`rank_links`). A link inside one
profile is kept; otherwise it is kept and joins the two profiles only if the joined profile
stays within `max_identities` and every namespace limit, else it is cut by the first rule it
would break: `max_identities`, then `namespace_limit` by namespace in alphabetical order
(:func:`ordered_union`).

The ordered pass needs only the plain components that break a limit
(:func:`resolve_by_components`), and gives the same answer as a pass over the whole graph: a
link only ever joins profiles inside its component. For the same reason one pass over the links
of any set of whole components equals a pass per component, so the Spark side passes them in a
few buckets. And a component that as a whole keeps every limit needs no pass at all: any
union of its profiles is a part of it, so every link is kept and its profile is the component.
A cut link's two ends end in different profiles: profiles only grow, so a union that broke a
limit once breaks it at any later time. The Spark side (`profile_lake.spark.identity_linking`)
mirrors `resolve_by_components` step for step.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from profile_lake.identity.contraction import smallest_labels

BLOCKED = "blocked"
MAX_IDENTITIES = "max_identities"
NAMESPACE_LIMIT = "namespace_limit"


class Link(NamedTuple):
    """A link of two distinct canonical identities, `smaller < larger`, and its recency
    `(event_ts, record_id)` (any comparable event_ts: the pass only compares them). A named
    tuple: the ordered pass builds one per link, and a tuple is built several times faster
    than a frozen dataclass."""

    smaller: str
    larger: str
    event_ts: Any
    record_id: str

    @classmethod
    def of(cls, one: str, other: str, event_ts: Any, record_id: str) -> Link:
        if one == other:
            raise ValueError(f"a link joins two distinct identities, got {one} twice")
        return cls(min(one, other), max(one, other), event_ts, record_id)


class CutLink(NamedTuple):
    """A link not kept: the rule that cut it (namespace set for `namespace_limit`)."""

    link: Link
    rule: str
    namespace: str | None = None


@dataclass(frozen=True)
class Limits:
    """The size limits of a profile: at most `max_identities` identities (None: no limit) and
    at most `namespace_limits[ns]` identities of namespace `ns`."""

    max_identities: int | None = None
    namespace_limits: Mapping[str, int] = field(default_factory=dict)

    @property
    def is_empty(self) -> bool:
        return self.max_identities is None and not self.namespace_limits

    def broken_by(
        self, size: int, *namespace_counts: Mapping[str, int]
    ) -> tuple[str, str | None] | None:
        """The first rule a profile of `size` identities breaks, its identities per namespace
        being the sum of `namespace_counts` (the two profiles a link would join)."""
        if self.max_identities is not None and size > self.max_identities:
            return MAX_IDENTITIES, None
        for namespace, limit in self.ordered_namespace_limits:
            count = 0
            for counts in namespace_counts:
                count += counts.get(namespace, 0)
            if count > limit:
                return NAMESPACE_LIMIT, namespace
        return None

    @cached_property
    def ordered_namespace_limits(self) -> tuple[tuple[str, int], ...]:
        """The namespace limits in the order they are checked (alphabetical)."""
        return tuple(sorted(self.namespace_limits.items()))


@dataclass
class Resolution:
    """identity -> profile_id for every node, and the links cut."""

    profiles: dict[str, str]
    cut: list[CutLink]


def namespace_of(identity: str) -> str:
    return identity.partition(":")[0]


def rank_links(links: Iterable[Link]) -> list[Link]:
    """Most recent first; equal recency by smaller identity, then larger, ascending."""
    ordered = sorted(links, key=attrgetter("smaller", "larger"))
    return sorted(ordered, key=attrgetter("event_ts", "record_id"), reverse=True)


def ordered_union(nodes: Iterable[str], ranked: Iterable[Link], limits: Limits) -> Resolution:
    """The ordered pass over links already ranked (and none blocked): union-find whose roots
    are the smallest identity of their profile and carry its size and its counts of the
    namespaces that have a limit."""
    parent: dict[str, str] = {}
    size: dict[str, int] = {}
    counts: dict[str, dict[str, int]] = {}
    limited = set(limits.namespace_limits)

    def add(node: str) -> None:
        if node not in parent:
            parent[node] = node
            size[node] = 1
            namespace = namespace_of(node)
            counts[node] = {namespace: 1} if namespace in limited else {}

    def find(node: str) -> str:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for node in nodes:
        add(node)
    cut: list[CutLink] = []
    for link in ranked:
        smaller, larger = link.smaller, link.larger
        if smaller not in parent:
            add(smaller)
        if larger not in parent:
            add(larger)
        one, other = find(smaller), find(larger)
        if one == other:
            continue
        broken = limits.broken_by(size[one] + size[other], counts[one], counts[other])
        if broken is not None:
            cut.append(CutLink(link, *broken))
            continue
        root, child = (one, other) if one < other else (other, one)
        parent[child] = root
        size[root] += size.pop(child)
        merged = counts[root]
        for namespace, count in counts.pop(child).items():
            merged[namespace] = merged.get(namespace, 0) + count
    return Resolution({node: find(node) for node in parent}, cut)


def is_pressured(identities: Iterable[str], limits: Limits) -> bool:
    """Whether a component, joined whole, would break a limit (else the pass keeps every
    link of it)."""
    identities = list(identities)
    namespaces = Counter(namespace_of(identity) for identity in identities)
    return limits.broken_by(len(identities), namespaces) is not None


def resolve_by_components(
    nodes: Iterable[str], links: Iterable[Link], blocked: set[str], limits: Limits
) -> Resolution:
    """Profiles under the rules: blocked links cut, plain components of the others, and the
    ordered pass over the components that break a limit only."""
    links = list(links)
    open_links = [link for link in links if not {link.smaller, link.larger} & blocked]
    cut = [
        CutLink(link, BLOCKED) for link in sorted(links) if {link.smaller, link.larger} & blocked
    ]
    all_nodes = set(nodes) | {end for link in links for end in (link.smaller, link.larger)}
    resolution = resolve_open_links(all_nodes, open_links, limits).resolution
    return Resolution(resolution.profiles, cut + resolution.cut)


@dataclass
class OpenResolution:
    """The plain components of the open links (identity -> smallest identity of its
    component) and the profiles under the limits."""

    components: dict[str, str]
    resolution: Resolution


def resolve_open_links(
    nodes: Iterable[str], open_links: Iterable[Link], limits: Limits
) -> OpenResolution:
    """Plain components of the links left after the blocked ones are cut, and the ordered
    pass over the components that break a limit only; `nodes` adds identities in no link."""
    open_links = list(open_links)
    found = resolve_open_arrays(
        np.asarray(list(nodes), dtype=object),
        np.asarray([link.smaller for link in open_links], dtype=object),
        np.asarray([link.larger for link in open_links], dtype=object),
        [link.event_ts for link in open_links],
        [link.record_id for link in open_links],
        limits,
    )
    identities = found.identities.tolist()
    return OpenResolution(
        dict(zip(identities, found.components.tolist(), strict=True)),
        Resolution(dict(zip(identities, found.profiles.tolist(), strict=True)), found.cut),
    )


@dataclass
class ArrayResolution:
    """Every identity once (`identities`, in sorted order), its plain component and its
    profile, as arrays; and the links cut."""

    identities: np.ndarray
    components: np.ndarray
    profiles: np.ndarray
    cut: list[CutLink]


def resolve_open_arrays(
    nodes: np.ndarray,
    smaller: np.ndarray,
    larger: np.ndarray,
    event_ts: Sequence[Any],
    record_id: Sequence[Any],
    limits: Limits,
) -> ArrayResolution:
    """resolve_open_links on arrays, as a tenant's pandas call has them: the components by a
    vectorized union-find, the pressure by counts over them, and Link objects built only for
    the links of the components that break a limit, which get the ordered pass."""
    links = len(smaller)
    codes, uniques = pd.factorize(np.concatenate([smaller, larger, nodes]), sort=True)
    identities = np.asarray(uniques, dtype=object)
    labels = smallest_labels(codes[:links], codes[links : 2 * links], len(identities))
    components = identities[labels]
    under_pressure = pressured_roots(identities, labels, limits)[labels]
    pressured_links = [
        Link(smaller[index], larger[index], event_ts[index], record_id[index])
        for index in np.flatnonzero(under_pressure[codes[:links]])
    ]
    # one pass over every pressured component at once: they are disjoint, so each component's
    # profiles grow exactly as in a pass of its own (the Spark side passes buckets of them)
    resolution = ordered_union(identities[under_pressure], rank_links(pressured_links), limits)
    profiles = components.copy()
    passed = np.flatnonzero(under_pressure)
    profiles[passed] = [resolution.profiles[identity] for identity in identities[passed]]
    return ArrayResolution(identities, components, profiles, resolution.cut)


def pressured_roots(identities: np.ndarray, labels: np.ndarray, limits: Limits) -> np.ndarray:
    """For each identity that is the root of its component (`labels`: the root of each), whether
    the component, joined whole, breaks a limit (is_pressured, counted for all at once)."""
    pressured = np.zeros(len(identities), dtype=bool)
    if limits.is_empty:
        return pressured
    if limits.max_identities is not None:
        pressured |= np.bincount(labels, minlength=len(identities)) > limits.max_identities
    if limits.namespace_limits:
        namespaces = np.asarray([namespace_of(identity) for identity in identities], dtype=object)
        for namespace, limit in limits.namespace_limits.items():
            counts = np.bincount(labels[namespaces == namespace], minlength=len(identities))
            pressured |= counts > limit
    return pressured
