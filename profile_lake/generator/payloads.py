"""Payload schemas and the JSON Merge Patch documents drawn from them.

A schema is a tree of keys; every node keeps a small pool of pre-serialized `"key":value`
fragments, so a payload is a join of fragments (no per-line dicts, copies or json.dumps).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from profile_lake.generator.fastrandom import between, pick
from profile_lake.generator.vocab import (
    CITIES,
    COUNTRIES,
    FIRST_NAMES,
    GROUP_KEYS,
    LANGUAGES,
    LAST_NAMES,
    WORDS,
)

LEAF_POOL = 12
OBJECT_POOL = 16
NULL_RATE = 0.12  # a patched key set to null (removed)
RETYPE_RATE = 0.04  # a patched key changes shape (object <-> scalar)
FULL_CHILD_RATE = 0.25  # a patched object replaced by a full object (merged recursively)
EMPTY_PATCH_RATE = 0.01


def dumps(value: Any) -> str:
    """Compact JSON, UTF-8 characters kept as they are."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def quote(text: str) -> str:
    """A JSON string literal; plain ASCII text (most ids) skips the encoder."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    return dumps(text)


def _iso(rng: random.Random) -> str:
    return (
        f"2025-{between(rng, 1, 12):02d}-{between(rng, 1, 28):02d}"
        f"T{between(rng, 0, 23):02d}:{between(rng, 0, 59):02d}:00Z"
    )


def _order(rng: random.Random) -> dict[str, Any]:
    return {
        "sku": f"SKU-{between(rng, 1000, 9999)}",
        "qty": between(rng, 1, 5),
        "price": round(rng.uniform(1, 500), 2),
    }


def _small_object(rng: random.Random) -> dict[str, Any]:
    if rng.random() < 0.1:
        return {}
    return {pick(rng, WORDS): pick(rng, WORDS), "n": between(rng, 0, 99), "ok": rng.random() < 0.5}


VALUE_MAKERS: dict[str, Callable[[random.Random], Any]] = {
    "name": lambda rng: f"{pick(rng, FIRST_NAMES)} {pick(rng, LAST_NAMES)}",
    "city": lambda rng: pick(rng, CITIES),
    "country": lambda rng: pick(rng, COUNTRIES),
    "lang": lambda rng: pick(rng, LANGUAGES),
    "zip": lambda rng: f"{between(rng, 1000, 99999):05d}",
    "word": lambda rng: pick(rng, WORDS),
    "text": lambda rng: " ".join(rng.choices(WORDS, k=between(rng, 3, 12))),
    "enum": lambda rng: pick(rng, ("bronze", "silver", "gold", "platinum", "none")),
    "int": lambda rng: between(rng, 0, 10_000),
    "bigint": lambda rng: between(rng, 2**32, 2**53),
    "float": lambda rng: round(rng.uniform(-50, 5000), between(rng, 0, 4)),
    "bool": lambda rng: rng.random() < 0.5,
    "timestamp": _iso,
    "date": lambda rng: f"{between(rng, 1940, 2010)}-{between(rng, 1, 12):02d}-01",
    "hex": lambda rng: f"{rng.getrandbits(256):064x}",
    "str_array": lambda rng: rng.sample(WORDS, between(rng, 0, 5)),
    "int_array": lambda rng: [between(rng, 0, 100) for _ in range(between(rng, 0, 6))],
    "obj_array": lambda rng: [_order(rng) for _ in range(between(rng, 0, 3))],
    "small_obj": _small_object,
}
LEAF_CATALOG: tuple[tuple[str, str], ...] = (
    ("first_name", "name"), ("full_name", "name"), ("city", "city"), ("country", "country"),
    ("zip", "zip"), ("score", "float"), ("visits", "int"), ("last_seen", "timestamp"),
    ("opt_in", "bool"), ("tier", "enum"), ("points", "int"), ("language", "lang"),
    ("ltv", "float"), ("tags", "str_array"), ("channels", "str_array"), ("notes", "text"),
    ("recent_orders", "obj_array"), ("rating", "int"), ("campaign", "word"), ("status", "enum"),
    ("birthday", "date"), ("email_sha256", "hex"), ("scores", "int_array"), ("is_active", "bool"),
    ("extra", "small_obj"), ("balance", "float"), ("counter", "bigint"), ("utm.source", "word"),
    ("größe", "int"), ("plan", "enum"), ("verified", "bool"), ("interests", "str_array"),
)  # fmt: skip
SCALAR_REPLACEMENTS: tuple[str, ...] = ('"n/a"', "0", "false", "[]", '"migrated"')


@dataclass(frozen=True)
class Node:
    """A key of the schema: a leaf, or an object with children."""

    key: str  # serialized key with its colon: '"key":'
    fragments: tuple[str, ...]  # serialized '"key":value' members to pick from
    children: tuple[Node, ...] = ()


def _unique_key(name: str, used: set[str]) -> str:
    key, suffix = name, 2
    while key in used:
        key, suffix = f"{name}_{suffix}", suffix + 1
    used.add(key)
    return key


def _leaf(rng: random.Random, used: set[str]) -> Node:
    name, kind = pick(rng, LEAF_CATALOG)
    key = dumps(_unique_key(name, used)) + ":"
    values = [dumps(VALUE_MAKERS[kind](rng)) for _ in range(LEAF_POOL)]
    return Node(key, tuple(key + value for value in values))


def _object(rng: random.Random, name: str, children: tuple[Node, ...]) -> Node:
    key = dumps(name) + ":"
    fragments = tuple(
        key + "{" + ",".join(pick(rng, child.fragments) for child in children) + "}"
        for _ in range(OBJECT_POOL)
    )
    return Node(key, fragments, children)


def _split(rng: random.Random, total: int, parts: int) -> list[int]:
    """`total` split into `parts` positive sizes."""
    cuts = sorted(rng.sample(range(1, total), parts - 1)) if parts > 1 else []
    bounds = [0, *cuts, total]
    return [high - low for low, high in pairwise(bounds)]


def build_children(rng: random.Random, n_leaves: int, depth: int) -> tuple[Node, ...]:
    """Nodes holding exactly `n_leaves` leaves, nested up to `depth` levels."""
    used: set[str] = set()
    if depth <= 1 or n_leaves < 3:
        return tuple(_leaf(rng, used) for _ in range(n_leaves))
    n_direct = max(1, n_leaves // 3)
    n_groups = max(1, min(12, (n_leaves - n_direct) // 6))
    nodes = [_leaf(rng, used) for _ in range(n_direct)]
    for size in _split(rng, n_leaves - n_direct, n_groups):
        group = _unique_key(pick(rng, GROUP_KEYS), used)
        nodes.append(_object(rng, group, build_children(rng, size, depth - 1)))
    rng.shuffle(nodes)
    return tuple(nodes)


def _max_bytes(nodes: tuple[Node, ...]) -> int:
    sizes = [max(len(fragment.encode()) for fragment in node.fragments) for node in nodes]
    return 2 + sum(sizes) + max(0, len(sizes) - 1)


@dataclass(frozen=True)
class PayloadSchema:
    """The payload keys of one tenant and record type."""

    top: tuple[Node, ...]
    pools: tuple[tuple[str, ...], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "pools", tuple(node.fragments for node in self.top))

    def full(self, rng: random.Random) -> str:
        """A payload with every key set (the hottest line of the generator: kept inline)."""
        draw = rng.random
        return "{" + ",".join([pool[int(draw() * len(pool))] for pool in self.pools]) + "}"

    def patch(self, rng: random.Random) -> str:
        """A partial merge patch: a few keys set, replaced, merged or removed (null)."""
        if rng.random() < EMPTY_PATCH_RATE:
            return "{}"
        return _patch_object(rng, self.top)

    def max_bytes(self) -> int:
        return _max_bytes(self.top)


def _patch_object(rng: random.Random, nodes: tuple[Node, ...]) -> str:
    count = min(len(nodes), 1 + int(rng.expovariate(0.8)))
    return "{" + ",".join([_patch_node(rng, node) for node in rng.sample(nodes, count)]) + "}"


def _patch_node(rng: random.Random, node: Node) -> str:
    draw = rng.random()
    if draw < NULL_RATE:
        return node.key + "null"
    if draw < NULL_RATE + RETYPE_RATE:
        if node.children:
            return node.key + pick(rng, SCALAR_REPLACEMENTS)
        return node.key + '{"migrated":true}'
    if not node.children or draw < NULL_RATE + RETYPE_RATE + FULL_CHILD_RATE:
        return pick(rng, node.fragments)
    return node.key + _patch_object(rng, node.children)


def build_schema(rng: random.Random, n_leaves: int, depth: int, budget: int) -> PayloadSchema:
    """A schema whose largest full payload stays within `budget` bytes (top keys dropped)."""
    top = build_children(rng, n_leaves, depth)
    while len(top) > 1 and _max_bytes(top) > budget:
        top = top[:-1]
    return PayloadSchema(top)
