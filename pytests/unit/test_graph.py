"""Profiles as connected components, profile_id = smallest identity (SPEC §4, `profiles`)."""

from __future__ import annotations

import random
from collections.abc import Callable
from itertools import pairwise

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profile_lake.identity.graph import (
    components_large_small_star,
    components_union_find,
    large_star,
    small_star,
    to_pairs,
)

Components = Callable[..., dict[str, str]]
IMPLEMENTATIONS = [components_union_find, components_large_small_star]


def expected(edges: list[tuple[str, str]], nodes: list[str] = ()) -> dict[str, str]:
    graph = nx.Graph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(edges)
    return {node: min(part) for part in nx.connected_components(graph) for node in part}


@pytest.mark.parametrize("components", IMPLEMENTATIONS)
def test_self_links_and_isolated_nodes_are_their_own_profiles(components: Components) -> None:
    edges = [("email:a", "email:a"), ("crm:2", "phone:1")]
    assert components(edges, ["cookie:x"]) == {
        "email:a": "email:a",
        "crm:2": "crm:2",
        "phone:1": "crm:2",
        "cookie:x": "cookie:x",
    }
    assert components([]) == {}


@pytest.mark.parametrize("components", IMPLEMENTATIONS)
@pytest.mark.parametrize("order", ["ascending", "descending", "shuffled"])
def test_chain_of_a_thousand(components: Components, order: str) -> None:
    names = [f"id:{i:04d}" for i in range(1000)]
    if order == "descending":
        names.reverse()
    elif order == "shuffled":
        random.Random(7).shuffle(names)
    edges = list(pairwise(names))
    assert components(edges) == dict.fromkeys(names, "id:0000")


@pytest.mark.parametrize("components", IMPLEMENTATIONS)
def test_stars_and_cycles(components: Components) -> None:
    star = [("hub:m", f"leaf:{i:03d}") for i in range(300)]
    cycle = [(f"cyc:{i:03d}", f"cyc:{(i + 1) % 300:03d}") for i in range(300)]
    edges = star + cycle
    assert components(edges) == expected(edges)


@pytest.mark.parametrize("components", IMPLEMENTATIONS)
def test_many_small_components_and_a_few_giants(components: Components) -> None:
    rng = random.Random(2014)
    edges: list[tuple[str, str]] = []
    for group in range(1500):
        size = rng.randint(1, 4)
        members = [f"s{group}:{k}" for k in range(size)]
        edges += [(members[0], member) for member in members]  # includes a self-link
    for giant in range(3):
        members = [f"g{giant}:{rng.getrandbits(40):x}" for _ in range(1500)]
        edges += [(rng.choice(members[:k]), members[k]) for k in range(1, len(members))]
        edges += [(rng.choice(members), rng.choice(members)) for _ in range(500)]
    rng.shuffle(edges)
    assert components(edges) == expected(edges)


@pytest.mark.parametrize("seed", range(20))
def test_random_graphs_match_networkx(seed: int) -> None:
    rng = random.Random(seed)
    nodes = [f"n:{rng.getrandbits(20):05x}" for _ in range(rng.randint(1, 400))]
    edges = [(rng.choice(nodes), rng.choice(nodes)) for _ in range(rng.randint(0, 400))]
    want = expected(edges, nodes)
    assert components_union_find(edges, nodes) == want
    assert components_large_small_star(edges, nodes) == want


NODES = st.text("abcdefgh", min_size=1, max_size=2)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(NODES, NODES), max_size=40), st.lists(NODES, max_size=5))
def test_both_implementations_match_networkx(edges, nodes) -> None:
    want = expected(edges, nodes)
    assert components_union_find(edges, nodes) == want
    assert components_large_small_star(edges, nodes) == want


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(NODES, NODES), max_size=40))
def test_each_step_keeps_components_and_converges_to_stars(edges) -> None:
    pairs = to_pairs(edges)
    nodes = [node for edge in edges for node in edge]
    want = expected(edges)
    while True:
        after_large = large_star(pairs)
        assert expected(list(after_large), nodes) == want
        after_small = small_star(after_large)
        assert expected(list(after_small), nodes) == want
        assert all(hi > lo for hi, lo in after_small)
        if after_small == pairs:
            break
        pairs = after_small
    # Fixed point: each non-minimum points once, straight at its component's minimum.
    his = [hi for hi, _ in pairs]
    assert len(his) == len(set(his))
    assert all(want[hi] == lo for hi, lo in pairs)
