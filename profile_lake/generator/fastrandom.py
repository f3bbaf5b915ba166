"""Quick draws for the hot paths: one `random()` call each, instead of `random.choice` and
`randint` (which loop over getrandbits). Deterministic for a seeded `random.Random`."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def pick(rng: random.Random, items: Sequence[T]) -> T:
    """A uniformly chosen item."""
    return items[int(rng.random() * len(items))]


def below(rng: random.Random, limit: int) -> int:
    """A uniform integer in [0, limit)."""
    return int(rng.random() * limit)


def between(rng: random.Random, low: int, high: int) -> int:
    """A uniform integer in [low, high], both included."""
    return low + int(rng.random() * (high - low + 1))
