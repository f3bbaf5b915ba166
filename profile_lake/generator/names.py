"""The entity_names stream: display names of identities, updated over time."""

from __future__ import annotations

import random

from profile_lake.generator.emission import Batch, EmissionPlan, add_duplicates, emission_keys
from profile_lake.generator.fastrandom import below, between, pick
from profile_lake.generator.payloads import dumps
from profile_lake.generator.timestamps import (
    DAY,
    MINUTE,
    WINDOW,
    next_instant,
    plan_seqs,
    snap,
    write_random,
)
from profile_lake.generator.vocab import FIRST_NAMES, LAST_NAMES, NAME_DECORATIONS

MAX_NAME = 1024
MAX_UPDATES = 4
NULL_RATE = 0.15  # an update that removes the name
EMPTY_RATE = 0.03  # an update to the empty name (which is a name, unlike null)
EQUAL_TS_RATE = 0.15

# one name update: (tenant, identity, name or None, instant, seq)
NameUpdate = tuple[str, str, str | None, int, int]


def random_name(rng: random.Random) -> str:
    """A person's name, often with non-ASCII letters, sometimes with an emoji."""
    return f"{pick(rng, FIRST_NAMES)} {pick(rng, LAST_NAMES)}{pick(rng, NAME_DECORATIONS)}"


def longest_name() -> str:
    """A name of exactly MAX_NAME characters, most of them two bytes in UTF-8."""
    return ("Zoë Ørsted-Müller " * 60)[:MAX_NAME]


def plan_name_values(rng: random.Random, count: int, edge: str | None) -> list[str | None]:
    """The names one identity goes through; `edge` (a boundary value) replaces one of them."""
    values: list[str | None] = []
    for _ in range(count):
        draw = rng.random()
        if draw < NULL_RATE:
            values.append(None)
        elif draw < NULL_RATE + EMPTY_RATE:
            values.append("")
        else:
            values.append(random_name(rng))
    if edge is not None:
        values[below(rng, count)] = edge
    return values


def plan_update_times(rng: random.Random, count: int, ingest_base: int) -> list[int]:
    """Increasing update instants of one identity (some equal)."""
    start = snap(rng, ingest_base - WINDOW + below(rng, WINDOW // 2))
    instants = [start]
    for _ in range(count - 1):
        same = rng.random() < EQUAL_TS_RATE
        instants.append(instants[-1] if same else next_instant(rng, instants[-1], 3 * DAY))
    return [min(instant, ingest_base - MINUTE) for instant in instants]


def plan_tenant_names(
    rng: random.Random,
    plan: EmissionPlan[NameUpdate],
    tenant: str,
    identities: list[str],
    count: int,
    batch: Batch,
) -> None:
    """Name updates for `count` identities of one tenant (its first two get boundary names)."""
    named = rng.sample(identities, min(count, len(identities)))
    for position, identity in enumerate(named):
        edge = {0: longest_name(), 1: ""}.get(position)
        updates = between(rng, 1, MAX_UPDATES)
        values = plan_name_values(rng, updates, edge)
        instants = plan_update_times(rng, updates, batch.ingest_base)
        seqs = plan_seqs(rng, instants, batch.seq_base)
        keys = emission_keys(rng, instants, batch)
        for value, instant, seq, key in zip(values, instants, seqs, keys, strict=True):
            plan.add((tenant, identity, value, instant, seq), key)


def plan_name_stream(
    rng: random.Random,
    identities_by_tenant: dict[str, list[str]],
    count_per_tenant: int,
    batch: Batch,
) -> EmissionPlan[NameUpdate]:
    """Name updates of every tenant, duplicates included."""
    plan: EmissionPlan[NameUpdate] = EmissionPlan()
    for tenant, identities in identities_by_tenant.items():
        plan_tenant_names(rng, plan, tenant, identities, count_per_tenant, batch)
    add_duplicates(plan, rng, batch)
    return plan


class NameRenderer:
    """Renders name updates as lines."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def __call__(self, event: NameUpdate) -> str:
        tenant, identity, name, instant, seq = event
        ts = write_random(self.rng, instant)
        return (
            f'{{"tenant_id":{dumps(tenant)},"id":{dumps(identity)},"name":{dumps(name)},'
            f'"updated_ts":"{ts}","seq":{seq}}}'
        )
