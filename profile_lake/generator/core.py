"""One generator run: plan every stream, then write its lines and the manifest."""

from __future__ import annotations

import gc
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from profile_lake.generator.bad_lines import BadContext, BadLine, plan_bad_lines
from profile_lake.generator.config import GeneratorConfig
from profile_lake.generator.emission import Batch, EmissionPlan, render_lines
from profile_lake.generator.manifest import build_manifest, write_manifest
from profile_lake.generator.mutations import RenameRenderer, plan_rename_stream
from profile_lake.generator.names import NameRenderer, plan_name_stream
from profile_lake.generator.records import (
    EventOptions,
    RecordPlan,
    RecordRenderer,
    plan_record_stream,
    plan_records,
    plan_schemas,
)
from profile_lake.generator.tenants import TENANTS, Tenant
from profile_lake.generator.timestamps import to_micros
from profile_lake.generator.writer import (
    BadEntry,
    FileStats,
    Progress,
    StreamWriter,
    next_free_part,
)

SEQ_STRIDE = 1_000_000  # batch n uses seqs from n * SEQ_STRIDE: batches never share a pair


@dataclass(frozen=True)
class World:
    """What stays the same across batches of one seed: tenants, records, identities."""

    tenants: tuple[Tenant, ...]
    records: dict[str, list[RecordPlan]]
    identities: dict[str, list[str]]


def tenant_identities(records: list[RecordPlan]) -> list[str]:
    """Every identity the records of a tenant use, in first-seen order."""
    seen: dict[str, None] = {}
    for record in records:
        seen[record.primary_id] = None
        seen.update(dict.fromkeys(record.related_ids))
    return list(seen)


def build_world(config: GeneratorConfig) -> World:
    """Tenants, records and identities; each tenant from its own random stream."""
    tenants = TENANTS[: config.tenants]
    records: dict[str, list[RecordPlan]] = {}
    for tenant in tenants:
        schemas = plan_schemas(config.seed, tenant, config.payload_fields, config.payload_depth)
        rng = random.Random(f"{config.seed}:{tenant.name}:structure")
        records[tenant.name] = plan_records(
            rng, tenant, config.records_per_tenant, config.related_ids, schemas
        )
    identities = {name: tenant_identities(plans) for name, plans in records.items()}
    return World(tenants, records, identities)


def bad_count(good: int, rate: float) -> int:
    """Bad lines to add so that about `rate` of all lines are bad (at least one if any)."""
    if good == 0 or rate <= 0:
        return 0
    return max(1, round(good * rate / (1 - rate)))


def interleave(
    rng: random.Random, good: Iterator[tuple[bytes, bool]], n_good: int, bad: list[BadLine]
) -> Iterator[tuple[bytes, BadLine | None, bool]]:
    """Good lines with the bad ones spread evenly over the stream (one per equal stretch)."""
    total = n_good + len(bad)
    positions = [
        rng.randrange(index * total // len(bad), (index + 1) * total // len(bad))
        for index in range(len(bad))
    ]
    next_bad = 0
    for position in range(total):
        if next_bad < len(bad) and position == positions[next_bad]:
            yield bad[next_bad].line, bad[next_bad], False
            next_bad += 1
        else:
            line, duplicate = next(good)
            yield line, None, duplicate


def _seeded(config: GeneratorConfig, first_part: int, purpose: str) -> random.Random:
    return random.Random(f"{config.seed}:{first_part}:{purpose}")


def plan_streams(
    config: GeneratorConfig, world: World, batch: Batch, first_part: int
) -> dict[str, tuple[EmissionPlan[Any], Any]]:
    """Each stream's emission plan and the renderer of its lines."""
    all_records = [record for tenant in world.tenants for record in world.records[tenant.name]]
    options = EventOptions(config.events_per_record, config.delete_rate, config.recreate_rate)
    records = plan_record_stream(
        _seeded(config, first_part, "plan:records"), all_records, options, batch
    )
    renames = plan_rename_stream(
        _seeded(config, first_part, "plan:id_mutations"),
        world.identities,
        config.renames_per_tenant,
        batch,
    )
    names = plan_name_stream(
        _seeded(config, first_part, "plan:entity_names"),
        world.identities,
        config.names_per_tenant,
        batch,
    )
    return {
        "records": (records, RecordRenderer(_seeded(config, first_part, "render"), all_records)),
        "id_mutations": (renames, RenameRenderer(_seeded(config, first_part, "render:ids"))),
        "entity_names": (names, NameRenderer(_seeded(config, first_part, "render:names"))),
    }


def generate(config: GeneratorConfig) -> dict[str, Any]:
    """Write one batch of landing files under config.out; returns (and writes) the manifest.

    The cyclic garbage collector is paused meanwhile: the generator builds millions of small
    acyclic objects, and repeated full collections over them would cost a third of the time.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _generate(config)
    finally:
        if collecting:
            gc.enable()


def _generate(config: GeneratorConfig) -> dict[str, Any]:
    first_part = next_free_part(config.out)
    batch = Batch(
        ingest_base=to_micros(config.ingest_base_dt),
        seq_base=first_part * SEQ_STRIDE,
        out_of_order_rate=config.out_of_order_rate,
        duplicate_rate=config.duplicate_rate,
    )
    world = build_world(config)
    context = BadContext(world.tenants, world.records, world.identities, batch)
    progress = Progress(config.quiet)
    files: dict[str, list[FileStats]] = {}
    bad_entries: list[BadEntry] = []
    for stream, (plan, render) in plan_streams(config, world, batch, first_part).items():
        bad_rng = _seeded(config, first_part, f"bad:{stream}")
        bad = plan_bad_lines(bad_rng, stream, bad_count(len(plan), config.bad_rate), context)
        writer = StreamWriter(
            config.out, stream, first_part, config.lines_per_file, config.gzip_every, progress
        )
        for line, bad_line, duplicate in interleave(
            bad_rng, render_lines(plan, render), len(plan), bad
        ):
            writer.write(line, bad_line, duplicate)
        files[stream] = writer.close()
        bad_entries.extend(writer.bad)
    progress.report("written, done")
    manifest = build_manifest(config.options(), first_part, files, bad_entries)
    if config.manifest is not None:
        write_manifest(config.manifest, manifest)
    return manifest
