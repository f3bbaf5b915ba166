"""Connected components of the identity graph: identity -> profile_id (SPEC §4, `profiles`).

A profile is a connected component of the graph linking each live record's canonical
primary_id to its canonical related_ids; its profile_id is the smallest identity in it by
string order. (Python compares strings by code point, which is the order of their UTF-8 bytes,
so it agrees with Spark's binary string order.) Self-links (primary_id equal to a related id)
and isolated identities are components of their own.

Two implementations giving the same answer:

* :func:`components_union_find`: the fast path for data that fits one process.
* :func:`components_large_small_star`: the alternating algorithm of Kiveris et al.,
  "Connected Components in MapReduce and Beyond" (SoCC 2014), written as rounds over an edge
  list with one group-by and one join per step, so a DataFrame version can mirror it line by
  line and be tested against this one. It needs O(log^2 n) rounds.

Edges of the round-based version are kept as *pairs* ``(hi, lo)`` with ``hi > lo``: every
undirected edge once, no self-loops. Both steps use ``m(u) = min({u} ∪ N(u))``, and for a
pair ``(hi, lo)`` the smaller neighbours of ``hi`` are exactly the ``lo`` of its pairs, so
``m(u) = min(u, min(lo over pairs with hi = u))``: one ``groupBy("hi").agg(min("lo"))``.
"""

from __future__ import annotations

from collections.abc import Iterable

Pair = tuple[str, str]  # (hi, lo) with hi > lo


def components_union_find(
    edges: Iterable[tuple[str, str]], nodes: Iterable[str] = ()
) -> dict[str, str]:
    """identity -> smallest identity of its component, by union-find.

    Roots are always the smallest identity of their set (the smaller root wins a union), so
    the answer needs no second pass; path halving keeps finds short even on long chains.
    """
    parent: dict[str, str] = {}

    def find(node: str) -> str:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for left, right in edges:
        parent.setdefault(left, left)
        parent.setdefault(right, right)
        left_root, right_root = find(left), find(right)
        if left_root < right_root:
            parent[right_root] = left_root
        elif right_root < left_root:
            parent[left_root] = right_root
    for node in nodes:
        parent.setdefault(node, node)
    return {node: find(node) for node in parent}


def to_pairs(edges: Iterable[tuple[str, str]]) -> set[Pair]:
    """Step 0: each undirected edge once as ``(greatest(a, b), least(a, b))``, self-loops out.

    Spark: ``select(greatest(a, b) as hi, least(a, b) as lo).where(hi != lo).distinct()``.
    """
    return {(a, b) if a > b else (b, a) for a, b in edges if a != b}


def smallest_neighbours(pairs: Iterable[Pair]) -> dict[str, str]:
    """``m(u)`` for every node with a smaller neighbour (the others have ``m(u) = u``).

    Spark: ``pairs.groupBy("hi").agg(min("lo").alias("m"))``.
    """
    smallest: dict[str, str] = {}
    for hi, lo in pairs:
        current = smallest.get(hi)
        if current is None or lo < current:
            smallest[hi] = lo
    return smallest


def large_star(pairs: set[Pair]) -> set[Pair]:
    """Large-star: each node ``u`` connects every neighbour ``v > u`` to ``m(u)``.

    A pair ``(hi, lo)`` is such a neighbour ``hi`` of ``u = lo``, so it becomes
    ``(hi, m(lo))``; ``hi > lo >= m(lo)`` keeps it a proper pair. Edges are not lost: each pair
    yields exactly one. Spark: ``pairs.join(m, pairs.lo == m.hi, "left")`` then
    ``select(pairs.hi, coalesce(m.m, pairs.lo) as lo).distinct()``.
    """
    smallest = smallest_neighbours(pairs)
    return {(hi, smallest.get(lo, lo)) for hi, lo in pairs}


def small_star(pairs: set[Pair]) -> set[Pair]:
    """Small-star: each node ``u`` connects its neighbours ``v <= u`` and itself to ``m(u)``.

    For a pair ``(hi, lo)``, ``u = hi`` links ``lo`` to ``m(hi)`` (dropped when ``lo`` is
    ``m(hi)``: a self-loop) and links ``hi`` itself to ``m(hi)``. Spark: ``pairs.join(m, "hi")``
    then ``select(lo as hi, m as lo).where(hi != lo)`` union ``m.select(hi, m as lo)``,
    ``distinct()``.
    """
    smallest = smallest_neighbours(pairs)
    linked = {(lo, smallest[hi]) for hi, lo in pairs if lo != smallest[hi]}
    linked.update(smallest.items())
    return linked


def components_large_small_star(
    edges: Iterable[tuple[str, str]], nodes: Iterable[str] = (), max_rounds: int = 10_000
) -> dict[str, str]:
    """identity -> smallest identity of its component, by alternating large- and small-star.

    Round: ``pairs = small_star(large_star(pairs))``, until a round leaves the pair set
    unchanged (Spark: compare counts and an anti-join, or a checksum, of the two DataFrames;
    checkpoint each round to cut the lineage). At that point every component is a star around
    its minimum, so each pair ``(hi, lo)`` reads "``hi`` is in the profile ``lo``"; nodes that
    are never a ``hi`` (component minima, isolated nodes, self-linked nodes) are their own
    profile. ``max_rounds`` only guards against a bug turning into an endless loop.
    """
    edges = list(edges)
    pairs = to_pairs(edges)
    for _ in range(max_rounds):
        next_pairs = small_star(large_star(pairs))
        if next_pairs == pairs:
            break
        pairs = next_pairs
    else:
        raise RuntimeError(f"large/small-star did not converge in {max_rounds} rounds")
    labels = {node: node for edge in edges for node in edge}
    labels.update((node, node) for node in nodes)
    for hi, lo in pairs:
        if lo < labels[hi]:
            labels[hi] = lo
    return labels
