"""Identities (`namespace:value`) and which records share them.

Records join clusters by preferential attachment (a Yule-Simon process), so the identity graph
has a few large connected components and many small ones.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field

from profile_lake.generator.config import MAX_RELATED_IDS
from profile_lake.generator.fastrandom import below, between, pick
from profile_lake.generator.vocab import (
    EMAIL_DOMAINS,
    FIRST_NAMES_ASCII,
    LAST_NAMES_ASCII,
    UNICODE_EMAIL_LOCALS,
)

NAMESPACE_WEIGHTS: tuple[tuple[str, int], ...] = (
    ("email", 30),
    ("phone", 15),
    ("cookie", 25),
    ("crm", 10),
    ("loyalty", 10),
    ("device", 10),
)
NAMESPACE_DRAW: tuple[str, ...] = tuple(
    name for name, weight in NAMESPACE_WEIGHTS for _ in range(weight)
)
PRIMARY_NAMESPACES: tuple[str, ...] = ("email", "email", "crm", "cookie", "loyalty")
NEW_CLUSTER_RATE = 0.35  # share of records that start a new cluster
NEW_PRIMARY_RATE = 0.6  # a record joining a cluster brings its own primary id
NEW_RELATED_RATE = 0.5  # a related id is new rather than one the cluster already has
MAX_IDENTITY_VALUE = 256


def _email(rng: random.Random, serial: int) -> str:
    if rng.random() < 0.03:
        local = pick(rng, UNICODE_EMAIL_LOCALS)
    else:
        local = f"{pick(rng, FIRST_NAMES_ASCII)}.{pick(rng, LAST_NAMES_ASCII)}"
    return f"{local}{serial}@{pick(rng, EMAIL_DOMAINS)}"


def _phone(rng: random.Random, serial: int) -> str:
    return f"+1{between(rng, 201, 989)}{serial % 10_000_000:07d}"


def _cookie(rng: random.Random, serial: int) -> str:
    if rng.random() < 0.5:
        return f"GA1.2.{between(rng, 10**8, 10**9 - 1)}.{1_700_000_000 + serial}"
    return f"{rng.getrandbits(64):016x}{serial:06x}"


def _crm(rng: random.Random, serial: int) -> str:
    if rng.random() < 0.5:
        return f"CRM-{serial:07d}"
    return f"0015g0000{serial:06d}{pick(rng, ('AAA', 'AAB', 'QAC'))}"


def _loyalty(rng: random.Random, serial: int) -> str:
    return f"LY{serial:09d}"


def _device(rng: random.Random, serial: int) -> str:
    if rng.random() < 0.4:  # a MAC address: the value itself contains colons
        raw = (rng.getrandbits(24) << 24) | (serial & 0xFFFFFF)
        return ":".join(f"{(raw >> shift) & 0xFF:02x}" for shift in range(40, -1, -8))
    return str(uuid.UUID(int=(rng.getrandbits(96) << 32) | serial)).upper()


_MAKERS = {
    "email": _email,
    "phone": _phone,
    "cookie": _cookie,
    "crm": _crm,
    "loyalty": _loyalty,
    "device": _device,
}


@dataclass
class IdentityFactory:
    """Makes identities that are unique within one tenant (a serial number is part of each)."""

    rng: random.Random
    serial: int = 0

    def make(self, namespace: str) -> str:
        self.serial += 1
        return f"{namespace}:{_MAKERS[namespace](self.rng, self.serial)}"

    def make_any(self) -> str:
        return self.make(pick(self.rng, NAMESPACE_DRAW))

    def make_primary(self) -> str:
        return self.make(pick(self.rng, PRIMARY_NAMESPACES))

    def make_longest(self) -> str:
        """An identity whose value has exactly the maximum length (256 characters)."""
        self.serial += 1
        stem = f"{self.serial:08d}"
        return "cookie:" + (stem * 40)[:MAX_IDENTITY_VALUE]


def draw_count(rng: random.Random, mean: float) -> int:
    """A Poisson-like count around `mean`, capped at MAX_RELATED_IDS."""
    if mean <= 0:
        return 0
    if mean > 30:
        return max(0, min(MAX_RELATED_IDS, round(rng.gauss(mean, mean**0.5))))
    threshold = pow(2.718281828459045, -mean)
    count, product = 0, rng.random()
    while product > threshold:
        count += 1
        product *= rng.random()
    return min(MAX_RELATED_IDS, count)


@dataclass
class RecordIdentities:
    """The identities of one record: its primary id and (all) its related ids."""

    primary_id: str
    related_ids: list[str] = field(default_factory=list)


@dataclass
class _Cluster:
    """The identities records of one cluster have used so far."""

    pool: list[str] = field(default_factory=list)
    members: set[str] = field(default_factory=set)

    def add(self, identities: list[str]) -> None:
        for identity in identities:
            if identity not in self.members:
                self.members.add(identity)
                self.pool.append(identity)


def _join_cluster(
    rng: random.Random, factory: IdentityFactory, cluster: _Cluster, mean_related: float
) -> RecordIdentities:
    reuse_primary = rng.random() >= NEW_PRIMARY_RATE or mean_related <= 0
    primary = pick(rng, cluster.pool) if reuse_primary else factory.make_primary()
    linked = reuse_primary
    related: list[str] = []
    for _ in range(draw_count(rng, mean_related)):
        if rng.random() < NEW_RELATED_RATE:
            related.append(factory.make_any())
        else:
            related.append(pick(rng, cluster.pool))
            linked = True
    if not linked:
        related.append(pick(rng, cluster.pool))  # keep the record connected to its cluster
    return RecordIdentities(primary, _unique(related, primary))


def _unique(identities: list[str], primary: str) -> list[str]:
    seen = {primary}
    kept = []
    for identity in identities:
        if identity not in seen:
            seen.add(identity)
            kept.append(identity)
    return kept[:MAX_RELATED_IDS]


def plan_identities(
    rng: random.Random, factory: IdentityFactory, n_records: int, mean_related: float
) -> list[RecordIdentities]:
    """Identities for n records; records of one cluster share identities.

    Record 0 has a primary id of the maximum length and record 1 exactly MAX_RELATED_IDS
    related ids: the boundaries of SPEC.md, inside the rules.
    """
    cluster_of: list[int] = []
    clusters: list[_Cluster] = []
    planned: list[RecordIdentities] = []
    for index in range(n_records):
        if not cluster_of or rng.random() < NEW_CLUSTER_RATE:
            clusters.append(_Cluster())
            cluster_index = len(clusters) - 1
            primary = factory.make_longest() if index == 0 else factory.make_primary()
            count = draw_count(rng, mean_related)
            record = RecordIdentities(primary, [factory.make_any() for _ in range(count)])
        else:
            cluster_index = cluster_of[below(rng, len(cluster_of))]
            record = _join_cluster(rng, factory, clusters[cluster_index], mean_related)
        if index == 1:
            missing = MAX_RELATED_IDS - len(record.related_ids)
            record.related_ids.extend(factory.make_any() for _ in range(missing))
        cluster_of.append(cluster_index)
        clusters[cluster_index].add([record.primary_id, *record.related_ids])
        planned.append(record)
    return planned
