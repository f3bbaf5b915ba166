"""Connected components by local contraction: the distributed path's algorithm, pure Python.

A tenant too large for one worker has its links split into buckets. Each bucket is resolved
on its own by a vectorized union-find (:func:`smallest_labels`): every identity of the bucket
gets its *local root*, the smallest identity of its component within the bucket. Then:

* an identity seen in one bucket only, and not its local root, is *peeled*: whatever its
  component turns out to be, it is its local root's. It leaves the graph, remembering the root;
* an identity seen in several buckets (a *boundary* identity) keeps one link to each of its
  local roots: these links are the next, smaller graph.

Every link of the graph lies in one bucket, and each bucket's components are spanned by the
links to their roots, so the next graph plus the peeled links has the components of the graph;
a peeled identity hangs off one root only, so leaving it out changes no other component. The
smallest identity of a component is the local root of every bucket it is in, so it is never
peeled, and the next graph's components keep their minimum. The passes repeat, bucketing by
the other end of the links each time, until no link is left; then the peeled identities take
their roots' labels, deepest pass first (:func:`unwind`).

A component that fits one bucket is resolved in its first pass, so most of a tenant's graph
never takes part in a second one. A pass that shrinks the graph too little (a graph where
almost every identity is on a boundary) hands the rest to the large-star / small-star rounds
(:mod:`profile_lake.identity.graph`), which need no locality.

:mod:`profile_lake.spark.identity_graph` runs the same steps as DataFrame operations; this
module is the reference the tests compare it with, and holds the bucket's own union-find.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from profile_lake.identity.graph import components_union_find

Link = tuple[str, str]
# the bucket of a link in a pass: (link, pass number) -> bucket
Bucketing = Callable[[Link, int], int]
# a pass that keeps more than this share of its links has found little locality
STALL_RATIO = 0.9


def smallest_labels(left: np.ndarray, right: np.ndarray, nodes: int) -> np.ndarray:
    """For nodes numbered 0..nodes-1 and edges (left[i], right[i]): each node's smallest node
    of its component, by hooking and pointer jumping on whole arrays.

    Each round hooks every root to the smallest root across its edges (roots only ever point
    to smaller nodes, so no cycle forms), then compresses every node to its root; edges whose
    ends already share a root are dropped, as they stay satisfied. The smallest node of a
    component is never hooked, so it ends as the component's one root.
    """
    labels = np.arange(nodes, dtype=np.int64)
    left, right = np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)
    while left.size:
        left_label, right_label = labels[left], labels[right]
        apart = left_label != right_label
        if not apart.any():
            break
        left, right = left[apart], right[apart]
        left_label, right_label = left_label[apart], right_label[apart]
        np.minimum.at(
            labels, np.maximum(left_label, right_label), np.minimum(left_label, right_label)
        )
        while True:
            jumped = labels[labels]
            if np.array_equal(jumped, labels):
                break
            labels = jumped
    return labels


def local_roots(sources: Sequence[str], targets: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(identities, their local roots) of one bucket's links: every identity once.

    The identities are numbered in sorted order (Python's string order is Spark's), so the
    smallest number of a component is its smallest identity.
    """
    codes, identities = pd.factorize(
        np.concatenate([np.asarray(sources, dtype=object), np.asarray(targets, dtype=object)]),
        sort=True,
    )
    half = len(sources)
    labels = smallest_labels(codes[:half], codes[half:], len(identities))
    identities = np.asarray(identities, dtype=object)
    return identities, identities[labels]


@dataclass(frozen=True)
class Contraction:
    """One pass: the next graph's links (boundary identity, a local root of it) and the
    peeled identities' roots."""

    links: list[Link]
    peeled: dict[str, str]


def contract(links: Iterable[Link], bucket: Callable[[Link], int]) -> Contraction:
    """One pass of local contraction over `links` (no self-links) bucketed by `bucket`."""
    buckets: dict[int, list[Link]] = defaultdict(list)
    for link in links:
        buckets[bucket(link)].append(link)
    roots_of: dict[str, list[str]] = defaultdict(list)
    for bucket_links in buckets.values():
        sources, targets = zip(*bucket_links, strict=True)
        for identity, root in zip(*local_roots(sources, targets), strict=True):
            roots_of[identity].append(root)
    next_links: list[Link] = []
    peeled: dict[str, str] = {}
    for identity, roots in roots_of.items():
        if len(roots) == 1:
            if roots[0] != identity:
                peeled[identity] = roots[0]
        else:
            next_links.extend((identity, root) for root in roots if root != identity)
    return Contraction(next_links, peeled)


def unwind(labels: dict[str, str], layers: Sequence[dict[str, str]]) -> dict[str, str]:
    """The labels of the last graph extended to every peeled identity, deepest pass first: a
    peeled identity takes its root's label, or the root itself when the root left the graph
    as a component of its own."""
    resolved = dict(labels)
    for peeled in reversed(layers):
        resolved.update({identity: resolved.get(root, root) for identity, root in peeled.items()})
    return resolved


def components_by_contraction(
    edges: Iterable[Link],
    nodes: Iterable[str] = (),
    bucketing: Bucketing | None = None,
    max_passes: int = 64,
) -> dict[str, str]:
    """identity -> smallest identity of its component, by passes of local contraction.

    `bucketing` spreads a pass's links over buckets; the default puts every link of a pass in
    one bucket, which resolves everything in the first pass. A pass that keeps more than
    STALL_RATIO of its links, or `max_passes` of them, leaves the rest to union-find here
    (the large-star / small-star rounds in Spark)."""
    edges = list(edges)
    bucket_of: Bucketing = bucketing or (lambda link, pass_number: 0)
    labels = {node: node for edge in edges for node in edge}
    labels.update((node, node) for node in nodes)
    links = [(a, b) for a, b in edges if a != b]
    layers: list[dict[str, str]] = []
    for pass_number in range(max_passes):
        if not links:
            break
        contraction = contract(links, partial(bucket_of, pass_number=pass_number))
        layers.append(contraction.peeled)
        stalled = len(contraction.links) > STALL_RATIO * len(links)
        links = contraction.links
        if stalled:
            break
    rest = components_union_find(links)
    labels.update(unwind(rest, layers))
    return labels
