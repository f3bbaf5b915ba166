"""Emission order: which good line goes where in a stream, duplicates included.

A stream's events are planned first (cheap tuples); each gets an emission key, and a line is
rendered only when it is written. Exact duplicates render once and reuse the bytes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from profile_lake.generator.fastrandom import below
from profile_lake.generator.timestamps import WINDOW

EventT = TypeVar("EventT")


@dataclass(frozen=True)
class Batch:
    """What every stream of one batch shares: its time window, seq space and arrival rates."""

    ingest_base: int  # microseconds; every instant of the batch falls before it
    seq_base: int  # seqs of this batch start here, so batches never share (instant, seq)
    out_of_order_rate: float
    duplicate_rate: float

    @property
    def earliest(self) -> int:
        return self.ingest_base - WINDOW


@dataclass
class EmissionPlan(Generic[EventT]):
    """The events of one stream and the order their lines are written in."""

    events: list[EventT] = field(default_factory=list)
    keys: list[int] = field(default_factory=list)
    slots: list[int] = field(default_factory=list)  # event index per emitted line
    duplicated: set[int] = field(default_factory=set)

    def add(self, event: EventT, key: int) -> int:
        """Add an event emitted at `key`; returns its index."""
        index = len(self.events)
        self.events.append(event)
        self.keys.append(key)
        self.slots.append(index)
        return index

    def duplicate(self, index: int, key: int) -> None:
        """Emit the line of event `index` once more, at `key`."""
        self.keys.append(key)
        self.slots.append(index)
        self.duplicated.add(index)

    def __len__(self) -> int:
        return len(self.slots)

    def ordered(self) -> list[int]:
        """Event indices in emission order (stable, so ties keep planning order)."""
        order = sorted(range(len(self.slots)), key=self.keys.__getitem__)
        return [self.slots[position] for position in order]


def add_duplicates(plan: EmissionPlan[EventT], rng: random.Random, batch: Batch) -> None:
    """Duplicate about `duplicate_rate` of the planned events, each at a random key."""
    if batch.duplicate_rate <= 0:
        return
    for index in range(len(plan.events)):
        if rng.random() < batch.duplicate_rate:
            plan.duplicate(index, batch.earliest + below(rng, WINDOW))


def emission_keys(rng: random.Random, instants: list[int], batch: Batch) -> list[int]:
    """Keys for one entity's events (in time order): mostly their instants; at the batch's
    out-of-order rate, random keys handed out in an order that is not the time order."""
    if len(instants) < 2 or rng.random() >= batch.out_of_order_rate:
        return list(instants)
    keys = sorted(batch.earliest + below(rng, WINDOW) for _ in instants)
    order = list(range(len(keys)))
    rng.shuffle(order)
    if order == sorted(order):
        order.reverse()
    return [keys[position] for position in order]


def render_lines(
    plan: EmissionPlan[EventT], render: Callable[[EventT], str]
) -> Iterator[tuple[bytes, bool]]:
    """Lines of the stream in emission order, each with whether it repeats an earlier line."""
    cache: dict[int, bytes] = {}
    duplicated = plan.duplicated
    events = plan.events
    for index in plan.ordered():
        if index not in duplicated:
            yield render(events[index]).encode(), False
        elif index in cache:
            yield cache[index], True
        else:
            line = cache[index] = render(events[index]).encode()
            yield line, False
