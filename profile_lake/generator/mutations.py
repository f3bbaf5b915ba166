"""The id_mutations stream: renames of one identity into another.

Renames come in groups: chains (a->b, b->c, c->d), single renames, fan-ins (a->c, b->c),
cycles (a->b, b->a) and no-ops (a->a). Some groups arrive in reverse order.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from itertools import pairwise

from profile_lake.generator.emission import Batch, EmissionPlan, add_duplicates
from profile_lake.generator.fastrandom import below, between, pick
from profile_lake.generator.payloads import dumps
from profile_lake.generator.timestamps import DAY, MINUTE, WINDOW, next_instant, snap, write_random

EQUAL_TS_RATE = 0.2
REVERSED_RATE = 0.3
FIRST_GROUPS: tuple[str, ...] = ("noop", "cycle", "chain", "fan_in", "single")
GROUP_MIX: tuple[str, ...] = (
    "chain",
    "chain",
    "chain",
    "single",
    "single",
    "fan_in",
    "cycle",
    "noop",
)

# one rename: (tenant, from_id, to_id, instant, seq)
Rename = tuple[str, str, str, int, int]


def group_pairs(rng: random.Random, kind: str, identities: list[str]) -> list[tuple[str, str]]:
    """The (from, to) pairs of one group, in execution order."""
    if kind == "noop" or len(identities) < 2:
        identity = pick(rng, identities)
        return [(identity, identity)]
    if kind == "single":
        a, b = rng.sample(identities, 2)
        return [(a, b)]
    if kind == "cycle":
        a, b = rng.sample(identities, 2)
        return [(a, b), (b, a)]
    if kind == "fan_in" and len(identities) >= 3:
        a, b, c = rng.sample(identities, 3)
        return [(a, c), (b, c)]
    length = min(len(identities) - 1, between(rng, 2, 4))
    chain = rng.sample(identities, length + 1)
    return list(pairwise(chain))


@dataclass
class TieBreaker:
    """Hands out seqs so that no two renames of a tenant share (instant, seq)."""

    seq_base: int
    taken: set[tuple[int, int]]

    def seq(self, rng: random.Random, instant: int, after: int | None) -> int:
        fresh = after is None  # a new instant: any small seq; a tie: after the previous one
        seq = self.seq_base + between(rng, 0, 9) if fresh else after + between(rng, 1, 3)
        while (instant, seq) in self.taken:
            seq += 1
        self.taken.add((instant, seq))
        return seq


def plan_group_times(rng: random.Random, count: int, ingest_base: int) -> list[int]:
    """Increasing execution instants for one group (some equal)."""
    start = snap(rng, ingest_base - WINDOW + below(rng, WINDOW // 2))
    instants = [start]
    for _ in range(count - 1):
        same = rng.random() < EQUAL_TS_RATE
        instants.append(instants[-1] if same else next_instant(rng, instants[-1], DAY))
    return [min(instant, ingest_base - MINUTE) for instant in instants]


def plan_tenant_renames(
    rng: random.Random,
    plan: EmissionPlan[Rename],
    tenant: str,
    identities: list[str],
    count: int,
    batch: Batch,
) -> None:
    """Add about `count` renames of one tenant, drawn from the identities of its records."""
    if not identities or count <= 0:
        return
    ties = TieBreaker(batch.seq_base, set())
    kinds = list(FIRST_GROUPS)  # every kind of group once, then a random mix
    planned = 0
    while planned < count:
        if not kinds:
            kinds = rng.sample(GROUP_MIX, len(GROUP_MIX))
        pairs = group_pairs(rng, kinds.pop(0), identities)[: count - planned]
        instants = plan_group_times(rng, len(pairs), batch.ingest_base)
        seqs: list[int] = []
        for position, instant in enumerate(instants):
            same = position > 0 and instant == instants[position - 1]
            seqs.append(ties.seq(rng, instant, seqs[-1] if same else None))
        keys = list(reversed(instants)) if rng.random() < REVERSED_RATE else list(instants)
        for (from_id, to_id), instant, seq, key in zip(pairs, instants, seqs, keys, strict=True):
            plan.add((tenant, from_id, to_id, instant, seq), key)
        planned += len(pairs)


def plan_rename_stream(
    rng: random.Random,
    identities_by_tenant: dict[str, list[str]],
    count_per_tenant: int,
    batch: Batch,
) -> EmissionPlan[Rename]:
    """Renames of every tenant, duplicates included."""
    plan: EmissionPlan[Rename] = EmissionPlan()
    for tenant, identities in identities_by_tenant.items():
        plan_tenant_renames(rng, plan, tenant, identities, count_per_tenant, batch)
    add_duplicates(plan, rng, batch)
    return plan


class RenameRenderer:
    """Renders renames as lines."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def __call__(self, event: Rename) -> str:
        tenant, from_id, to_id, instant, seq = event
        ts = write_random(self.rng, instant)
        return (
            f'{{"tenant_id":{dumps(tenant)},"from_id":{dumps(from_id)},"to_id":{dumps(to_id)},'
            f'"executed_ts":"{ts}","seq":{seq}}}'
        )
