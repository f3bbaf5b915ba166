"""The distributed components path's algorithm (profile_lake.identity.contraction) against
networkx, on random graphs and random bucketings."""

from __future__ import annotations

import random
import zlib
from itertools import pairwise

import networkx as nx
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from profile_lake.identity.contraction import (
    components_by_contraction,
    contract,
    local_roots,
    smallest_labels,
)

Link = tuple[str, str]


def expected(edges: list[Link], nodes: list[str] = ()) -> dict[str, str]:
    graph = nx.Graph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(edges)
    return {node: min(part) for part in nx.connected_components(graph) for node in part}


def hashed_buckets(buckets: int, salt: int = 0):
    """Bucket a link by a hash of one end, the larger on even passes and the smaller on odd
    ones, as the Spark path does."""

    def bucket(link: Link, pass_number: int) -> int:
        end = max(link) if pass_number % 2 == 0 else min(link)
        return zlib.crc32(f"{salt}:{pass_number}:{end}".encode()) % buckets

    return bucket


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=80),
    st.integers(1, 6),
    st.integers(0, 1000),
)
def test_contraction_equals_components_on_random_graphs(pairs, buckets, salt) -> None:
    edges = [(f"id:{a:02d}", f"id:{b:02d}") for a, b in pairs]
    nodes = ["id:99", "id:00"]
    assert components_by_contraction(edges, nodes, hashed_buckets(buckets, salt)) == expected(
        edges, nodes
    )


def test_random_bucketing_of_a_large_sparse_graph() -> None:
    rng = random.Random(11)
    names = [f"email:{rng.getrandbits(40):011x}" for _ in range(3000)]
    edges = [(rng.choice(names), rng.choice(names)) for _ in range(2500)]
    edges += list(pairwise(names[:400]))  # one long chain through many buckets

    def random_bucket(link: Link, pass_number: int) -> int:
        return random.Random(f"{link}:{pass_number}").randrange(7)

    assert components_by_contraction(edges, (), random_bucket) == expected(edges)
    assert components_by_contraction(edges, (), hashed_buckets(7)) == expected(edges)


def test_a_component_within_one_bucket_is_resolved_in_the_first_pass() -> None:
    star = [("hub:0", f"leaf:{index:03d}") for index in range(50)]
    chain = list(pairwise(f"chain:{index:03d}" for index in range(50)))
    contraction = contract(star + chain, lambda link: 0 if link[0].startswith("hub") else 1)
    assert contraction.links == []
    assert contraction.peeled == {
        **{f"leaf:{index:03d}": "hub:0" for index in range(50)},
        **{f"chain:{index:03d}": "chain:000" for index in range(1, 50)},
    }


def test_a_boundary_identity_keeps_a_link_to_each_local_root() -> None:
    links = [("b:2", "a:1"), ("c:3", "b:2"), ("b:2", "z:9")]
    contraction = contract(links, lambda link: 0 if link == ("c:3", "b:2") else 1)
    # bucket 1: {a:1, b:2, z:9} rooted at a:1; bucket 0: {b:2, c:3} rooted at b:2
    assert sorted(contraction.links) == [("b:2", "a:1")]
    assert contraction.peeled == {"z:9": "a:1", "c:3": "b:2"}


def test_a_pass_without_locality_hands_the_rest_to_union_find() -> None:
    chain = list(pairwise(f"n:{index:04d}" for index in range(300)))

    def alone(link: Link, pass_number: int) -> int:  # every link its own bucket
        return zlib.crc32(repr(link).encode())

    assert components_by_contraction(chain, (), alone) == expected(chain)


def test_smallest_labels_on_chains_in_every_order() -> None:
    for order in ("ascending", "descending", "shuffled"):
        nodes = list(range(5000))
        if order == "descending":
            nodes.reverse()
        elif order == "shuffled":
            random.Random(3).shuffle(nodes)
        left, right = np.array(nodes[:-1]), np.array(nodes[1:])
        assert (smallest_labels(left, right, 5000) == 0).all(), order


def test_smallest_labels_of_isolated_nodes_are_themselves() -> None:
    labels = smallest_labels(np.array([3]), np.array([1]), 5)
    assert labels.tolist() == [0, 1, 2, 1, 4]


def test_local_roots_follow_string_order() -> None:
    identities, roots = local_roots(["é:1", "b:1", "a:2"], ["e:1", "a:10", "a:2"])
    assert dict(zip(identities, roots, strict=True)) == {
        "a:10": "a:10",
        "b:1": "a:10",
        "a:2": "a:2",
        "e:1": "e:1",
        "é:1": "e:1",
    }
