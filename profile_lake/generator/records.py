"""The records stream: data records, their CDC events (upserts, deletes) and their lines."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from typing import NamedTuple

from profile_lake.generator.emission import Batch, EmissionPlan, add_duplicates, emission_keys
from profile_lake.generator.fastrandom import below, between, pick
from profile_lake.generator.identities import IdentityFactory, plan_identities
from profile_lake.generator.payloads import PayloadSchema, build_schema, quote
from profile_lake.generator.tenants import Tenant
from profile_lake.generator.timestamps import (
    HOUR,
    MINUTE,
    WINDOW,
    next_instant,
    plan_seqs,
    snap,
    write_random,
)

MAX_RECORD_ID = 256
ID_PREFIXES = {"profile": "prof", "event": "evt", "order": "ord"}
EQUAL_TS_RATE = 0.12  # an event at the same instant as the one before it (seq breaks the tie)
FULL_UPSERT_RATE = 0.2  # a later upsert that sends every key, not a partial patch
RELATED_GROWTH_RATE = 0.3  # a later event that carries one more related id

FULL, PATCH, DELETE = 0, 1, 2
# one event: (record index, instant, seq, kind, number of related ids it carries)
RecordEvent = tuple[int, int, int, int, int]


class RecordPlan(NamedTuple):
    """One data record: the parts of its lines that never change, pre-serialized.

    (A NamedTuple, not a frozen dataclass: a million of them are built, and this is faster.)
    """

    tenant: str
    record_id: str
    record_type: str
    primary_id: str
    related_ids: tuple[str, ...]
    head: str  # '{"tenant_id":..,"record_id":..,"op":"'
    body: str  # ',"record_type":..,"primary_id":..'
    quoted_related: tuple[str, ...]
    schema: PayloadSchema


def make_record_id(rng: random.Random, index: int, record_type: str) -> str:
    """Mostly `prof-0000042` or a UUID; the first records of a tenant test the boundaries."""
    if index == 0:
        return ("rec-" + "0123456789abcdef" * 17)[:MAX_RECORD_ID]  # exactly 256 characters
    if index == 1:
        return "Q"  # a single character
    if index == 2:
        return f"kundé/müller #{index}"  # unicode, a slash, a space
    if rng.random() < 0.3:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))
    return f"{ID_PREFIXES.get(record_type, 'rec')}-{index:07d}"


def plan_records(
    rng: random.Random,
    tenant: Tenant,
    n_records: int,
    mean_related: float,
    schemas: dict[str, PayloadSchema],
) -> list[RecordPlan]:
    """The records of one tenant (the same for every batch of a seed)."""
    identities = plan_identities(rng, IdentityFactory(rng), n_records, mean_related)
    records = []
    for index, ids in enumerate(identities):
        record_type = pick(rng, tenant.record_types)
        record_id = make_record_id(rng, index, record_type)
        head = f'{{"tenant_id":{quote(tenant.name)},"record_id":{quote(record_id)},"op":"'
        body = f',"record_type":{quote(record_type)},"primary_id":{quote(ids.primary_id)}'
        quoted = tuple(quote(identity) for identity in ids.related_ids)
        records.append(
            RecordPlan(
                tenant.name,
                record_id,
                record_type,
                ids.primary_id,
                tuple(ids.related_ids),
                head,
                body,
                quoted,
                schemas[record_type],
            )
        )
    return records


def plan_schemas(seed: int, tenant: Tenant, n_fields: int, depth: int) -> dict[str, PayloadSchema]:
    """One payload schema per record type; full payloads stay under half the tenant's limit."""
    return {
        record_type: build_schema(
            random.Random(f"{seed}:{tenant.name}:{record_type}:schema"),
            n_fields,
            depth,
            tenant.max_payload_bytes // 2,
        )
        for record_type in tenant.record_types
    }


@dataclass(frozen=True)
class EventOptions:
    """The options that shape a record's events."""

    events_per_record: int
    delete_rate: float
    recreate_rate: float


def plan_ops(rng: random.Random, options: EventOptions) -> list[int]:
    """Event kinds of one record: a full upsert first, patches, maybe a delete (and re-create)."""
    count = between(rng, 1, 2 * options.events_per_record - 1)
    kinds = [FULL] + [FULL if rng.random() < FULL_UPSERT_RATE else PATCH for _ in range(count - 1)]
    if rng.random() >= options.delete_rate:
        return kinds
    if rng.random() < options.recreate_rate:
        kinds += [PATCH] * (3 - len(kinds))
        at = between(rng, 1, len(kinds) - 2)
        kinds[at], kinds[at + 1] = DELETE, FULL
        return kinds
    if len(kinds) == 1:
        kinds.append(DELETE)
    kinds[-1] = DELETE
    return kinds


def plan_instants(rng: random.Random, count: int, ingest_base: int) -> list[int]:
    """Increasing instants (some equal) that all fall in the window before the ingest base."""
    mean_gap = max(MINUTE, min(6 * HOUR, WINDOW // (4 * count)))
    offsets = [0]
    for _ in range(count - 1):
        same = rng.random() < EQUAL_TS_RATE
        offsets.append(offsets[-1] if same else next_instant(rng, offsets[-1], mean_gap))
    span = offsets[-1]
    room = WINDOW - 2 * MINUTE
    if span > room // 2:  # very many events: squeeze them (equal ones stay equal)
        offsets = [offset * (room // 2) // span for offset in offsets]
        span = offsets[-1]
    start = snap(rng, ingest_base - WINDOW + below(rng, room - span))
    return [start + offset for offset in offsets]


def plan_related_counts(rng: random.Random, kinds: list[int], available: int) -> list[int]:
    """How many related ids each event carries: a prefix of the record's list that grows
    (the last event carries them all, so every identity of the record appears in a line)."""
    count = max(0, available - between(rng, 0, min(2, available)))
    counts = []
    for position in range(len(kinds)):
        if position and count < available and rng.random() < RELATED_GROWTH_RATE:
            count += 1
        counts.append(count)
    counts[-1] = available
    return counts


def plan_record_events(
    rng: random.Random,
    plan: EmissionPlan[RecordEvent],
    record_index: int,
    record: RecordPlan,
    options: EventOptions,
    batch: Batch,
) -> None:
    """Add one record's events to the stream plan."""
    kinds = plan_ops(rng, options)
    instants = plan_instants(rng, len(kinds), batch.ingest_base)
    seqs = plan_seqs(rng, instants, batch.seq_base)
    related = plan_related_counts(rng, kinds, len(record.related_ids))
    keys = emission_keys(rng, instants, batch)
    for position, kind in enumerate(kinds):
        event = (record_index, instants[position], seqs[position], kind, related[position])
        plan.add(event, keys[position])


def plan_record_stream(
    rng: random.Random, records: list[RecordPlan], options: EventOptions, batch: Batch
) -> EmissionPlan[RecordEvent]:
    """Events of all records (all tenants), duplicates included."""
    plan: EmissionPlan[RecordEvent] = EmissionPlan()
    for index, record in enumerate(records):
        plan_record_events(rng, plan, index, record, options, batch)
    add_duplicates(plan, rng, batch)
    return plan


_NO_RELATED = ("", ',"related_ids":null', ',"related_ids":[]')


class RecordRenderer:
    """Renders record events as lines; payload choices come from its own random stream."""

    def __init__(self, rng: random.Random, records: list[RecordPlan]) -> None:
        self.rng = rng
        self.records = records

    def __call__(self, event: RecordEvent) -> str:
        record_index, instant, seq, kind, related_count = event
        record = self.records[record_index]
        rng = self.rng
        ts = write_random(rng, instant)
        if related_count:
            related = ',"related_ids":[' + ",".join(record.quoted_related[:related_count]) + "]"
        else:
            related = pick(rng, _NO_RELATED)
        if kind == FULL:
            op, payload = "upsert", ',"payload":' + record.schema.full(rng)
        elif kind == PATCH:
            op, payload = "upsert", ',"payload":' + record.schema.patch(rng)
        else:
            op, payload = "delete", ("" if rng.random() < 0.7 else ',"payload":null')
        return f'{record.head}{op}","event_ts":"{ts}","seq":{seq}{record.body}{related}{payload}}}'
