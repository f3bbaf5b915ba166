"""Incremental runs against the size of the lake (issue 38): the wall time of a whole `dbt build`
on a lake of about 1M records against the same run on a lake of about 10K records, both built
by the pipeline from generated landing data (8 tenants each). Two kinds of run on each lake,
after its initial build:
- no new files: the run a scheduler makes when nothing landed;
- one new file: one landing file of 1,000 record lines (about 75% updates of existing records,
  20% new records, half of them linked to an existing identity, 5% deletes), newer than
  everything landed before.
Goals, big lake / small lake: one-file run <= 1.25, no-new-files run <= 1.1 (a run's cost
follows what is new, not what the lake holds). Prints each run's wall time, the ratio big/small
of each kind of run and the ten slowest nodes of each run (dbt's run_results.json of that
invocation).

    .venv/bin/python bench/bench_incremental_run.py [--scale 1] [--file-lines 1000]
        [--repeats 1] [--events-per-record 3] [--keep]

--scale shrinks everything (both lakes and the new file; the file keeps at least 100 lines):
`--scale 0.01` is a smoke run (10K and 100 records). Each run is a production run: `dbt build`
in this process (dbt's session method, one SparkSession for every invocation) with the
run-history hooks and the data tests on the rows written, dbt's unit tests left out. The two
lakes run one after the other, side by side in one run: both are built first, then each kind
of run is timed on the big lake and then on the small one. One SparkSession serves one
PROFILE_LAKE_HOME, so both lakes live in one temporary home under /tmp, each in schemas of its
own (PROFILE_LAKE_SCHEMA) with its own landing folder (PROFILE_LAKE_LANDING) and dbt target
folder; the target is `local`. Everything is removed at the end unless --keep.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# big / small goals per kind of run (issue 51)
GOALS = {"none": 1.1, "file": 1.25}
BIG_RECORDS = 1_000_000
SMALL_RECORDS = 10_000
FILE_LINES = 1_000
MIN_FILE_LINES = 100
NEW_SHARE = 0.20  # lines of the new file that create a record
DELETE_SHARE = 0.05  # lines that delete an existing record; the rest update one
LINKED_SHARE = 0.5  # new records that name an existing identity among their related ids
SLOWEST = 10
KINDS = {"none": "no new files", "file": "one new file"}


@dataclass
class Run:
    """One dbt invocation: its wall time, the load meanwhile and its slowest nodes."""

    seconds: float
    load: float
    slowest: list[tuple[str, float]]


@dataclass
class Lake:
    """One lake of the benchmark: its schema, landing folder, dbt target and generator config."""

    name: str
    records: int
    schema: str
    landing: Path
    target: Path
    logs: Path
    config: Any  # GeneratorConfig
    lines: int = 0
    files: int = 0
    pending: list[Path] = field(default_factory=list)  # new files, not yet landed
    landed: list[str] = field(default_factory=list)  # new files landed, relative to landing
    runs: dict[str, list[Run]] = field(default_factory=lambda: {kind: [] for kind in KINDS})

    def env(self) -> dict[str, str]:
        return {"PROFILE_LAKE_SCHEMA": self.schema, "PROFILE_LAKE_LANDING": str(self.landing)}

    def build(self) -> Run:
        """One `dbt build` as a scheduler runs it; raises if it fails."""
        from plumbing import run_dbt

        args = ["build", "--log-path", str(self.logs), "--quiet"]
        started = time.perf_counter()
        run_dbt(args, env=self.env(), target_path=self.target, run_history=True)
        seconds = time.perf_counter() - started
        return Run(seconds, os.getloadavg()[0], slowest_nodes(self.target / "run_results.json"))

    def land_next_file(self) -> None:
        """Move the next pending file into the landing folder (a rename: it lands whole)."""
        pending = self.pending.pop(0)
        landed = self.landing / "records" / pending.name
        os.replace(pending, landed)
        self.landed.append(f"records/{pending.name}")


def slowest_nodes(run_results: Path) -> list[tuple[str, float]]:
    results = json.loads(run_results.read_text())["results"]
    timed = [(result["unique_id"], float(result["execution_time"] or 0.0)) for result in results]
    return sorted(timed, key=lambda item: -item[1])[:SLOWEST]


# --------------------------------------------------------------------------------------------
# Landing data
# --------------------------------------------------------------------------------------------


def generator_config(landing: Path, records: int, tenants: int, events_per_record: int) -> Any:
    from profile_lake.generator.config import GeneratorConfig

    per_tenant = max(1, records // tenants)
    return GeneratorConfig(
        out=landing,
        seed=38,
        tenants=tenants,
        records_per_tenant=per_tenant,
        events_per_record=events_per_record,
        renames_per_tenant=max(1, per_tenant // 100),
        names_per_tenant=max(1, per_tenant // 10),
        quiet=True,
    )


def generate_lake(lake: Lake, file_lines: int, new_files: int) -> float:
    """The lake's landing data, then its new files (kept aside until their runs). Seconds."""
    from profile_lake.generator.core import build_world, generate

    started = time.perf_counter()
    manifest = generate(lake.config)
    lake.lines = manifest["totals"]["lines"]
    lake.files = manifest["totals"]["files"]
    world = build_world(lake.config)
    pending = lake.landing.parent / f"{lake.name}-pending"
    pending.mkdir()
    for number in range(new_files):
        lake.pending.append(write_new_file(lake.config, world, pending, number, file_lines))
    return time.perf_counter() - started


def write_new_file(config: Any, world: Any, folder: Path, number: int, lines: int) -> Path:
    """One new records file in the landing format (SPEC.md section 2), named as the generator
    names the next part, its events in the hour after every event landed before (in any
    order, some records changed twice): updates (patches, some full upserts) and deletes of
    the generator's records, and new records of the generator's tenants and record types."""
    from profile_lake.generator.core import SEQ_STRIDE
    from profile_lake.generator.payloads import quote
    from profile_lake.generator.records import FULL_UPSERT_RATE, plan_schemas
    from profile_lake.generator.timestamps import HOUR, to_micros, write_random
    from profile_lake.generator.writer import next_free_part

    rng = random.Random(f"{config.seed}:new-file:{number}")
    part = next_free_part(config.out) + number
    start = to_micros(config.ingest_base_dt) + number * HOUR
    existing = [record for tenant in world.tenants for record in world.records[tenant.name]]
    schemas = {
        tenant.name: plan_schemas(config.seed, tenant, config.payload_fields, config.payload_depth)
        for tenant in world.tenants
    }
    out = []
    for line in range(lines):
        instant = start + rng.randrange(HOUR // 1000) * 1000
        stamp = f'"event_ts":"{write_random(rng, instant)}","seq":{part * SEQ_STRIDE + line}'
        roll = rng.random()
        if roll < NEW_SHARE:
            tenant = rng.choice(world.tenants)
            record_type = rng.choice(tenant.record_types)
            related = ""
            if world.identities[tenant.name] and rng.random() < LINKED_SHARE:
                related = f',"related_ids":[{quote(rng.choice(world.identities[tenant.name]))}]'
            out.append(
                f'{{"tenant_id":{quote(tenant.name)},"record_id":"new-{part:05d}-{line:05d}",'
                f'"op":"upsert",{stamp},"record_type":{quote(record_type)},'
                f'"primary_id":"email:new-{part}-{line}@example.test"{related},'
                f'"payload":{schemas[tenant.name][record_type].full(rng)}}}'
            )
            continue
        record = rng.choice(existing)
        related = ""
        if record.quoted_related:  # all of them, as the record's last event carried
            related = f',"related_ids":[{",".join(record.quoted_related)}]'
        if roll < NEW_SHARE + DELETE_SHARE:
            out.append(f'{record.head}delete",{stamp}{record.body}{related}}}')
            continue
        full = rng.random() < FULL_UPSERT_RATE
        payload = record.schema.full(rng) if full else record.schema.patch(rng)
        out.append(f'{record.head}upsert",{stamp}{record.body}{related},"payload":{payload}}}')
    path = folder / f"part-{part:05d}.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------
# The measurements
# --------------------------------------------------------------------------------------------


def timed_run(lake: Lake, kind: str, repeat: int) -> None:
    if kind == "file":
        lake.land_next_file()
    run = lake.build()
    lake.runs[kind].append(run)
    print(
        f"  {KINDS[kind]}, {lake.name} lake (run {repeat + 1}): {run.seconds:.1f} s "
        f"(load {run.load:.1f}); slowest nodes:",
        flush=True,
    )
    for unique_id, seconds in run.slowest:
        print(f"      {seconds:7.2f} s  {unique_id}")


def check_new_files(lake: Lake, lines: int) -> None:
    """Every new file was ingested whole and its every line accepted."""
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()  # dbt's session
    files = ", ".join(f"'{name}'" for name in lake.landed)
    found = spark.sql(
        f"select source_file, lines_landed, lines_accepted "
        f"from {lake.schema}.ingest_file_accounting where source_file in ({files})"
    ).collect()
    counts = {row["source_file"]: (row["lines_landed"], row["lines_accepted"]) for row in found}
    expected = {name: (lines, lines) for name in lake.landed}
    assert counts == expected, f"{lake.name} lake: new files (landed, accepted) {counts}"


def live_records(lake: Lake) -> int:
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()
    return spark.sql(f"select count(*) as n from {lake.schema}.records").first()["n"]


def report(lakes: list[Lake]) -> None:
    big, small = lakes
    print(f"{'run':<14} {'big':>10} {'small':>10} {'big/small':>10}")
    for kind, label in KINDS.items():
        on_big = statistics.median(run.seconds for run in big.runs[kind])
        on_small = statistics.median(run.seconds for run in small.runs[kind])
        ratio = on_big / on_small
        line = f"{label:<14} {on_big:8.1f} s {on_small:8.1f} s {ratio:9.2f}x"
        goal = GOALS[kind]
        line += f"  ({'meets' if ratio <= goal else 'misses'} the goal <= {goal})"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=float, default=1.0, help="1 = 1M and 10K records")
    parser.add_argument("--tenants", type=int, default=8)
    parser.add_argument("--events-per-record", type=int, default=3, help="generator's mean")
    parser.add_argument("--file-lines", type=int, default=FILE_LINES, help="at scale 1")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each kind per lake")
    parser.add_argument("--keep", action="store_true", help="keep the lakes (for profiling)")
    args = parser.parse_args()
    file_lines = max(MIN_FILE_LINES, round(args.file_lines * args.scale))

    root = Path(tempfile.mkdtemp(prefix="bench-incremental-run-", dir="/tmp"))
    # Forced, not defaulted: `make bench` exports the project's own PROFILE_LAKE_HOME.
    os.environ["PROFILE_LAKE_HOME"] = str(root / "lake")
    os.environ["PROFILE_LAKE_TARGET"] = "local"
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    lakes = []
    for name, records in (("big", BIG_RECORDS), ("small", SMALL_RECORDS)):
        records = max(args.tenants, round(records * args.scale))
        landing = root / f"{name}-landing"
        config = generator_config(landing, records, args.tenants, args.events_per_record)
        schema = f"bench_run_{name}"
        target = root / "target" / schema
        lakes.append(Lake(name, records, schema, landing, target, root / "logs", config))
    try:
        run(lakes, file_lines, args.repeats)
    finally:
        if args.keep:
            print(f"lakes kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def run(lakes: list[Lake], file_lines: int, repeats: int) -> None:
    print(
        f"incremental run: {' and '.join(f'{lake.records:,}' for lake in lakes)} records "
        f"({lakes[0].config.tenants} tenants), new files of {file_lines:,} record lines"
    )
    for lake in lakes:
        seconds = generate_lake(lake, file_lines, repeats)
        print(
            f"  {lake.name} lake: {lake.lines:,} landing lines in {lake.files} files, "
            f"generated in {seconds:.1f} s",
            flush=True,
        )
    for lake in reversed(lakes):  # the small one first: a broken build fails early
        initial = lake.build()
        print(
            f"  initial dbt build, {lake.name} lake: {initial.seconds:.1f} s "
            f"(load {initial.load:.1f})",
            flush=True,
        )
    for repeat in range(repeats):
        for kind in KINDS:
            for lake in lakes:
                timed_run(lake, kind, repeat)
    for lake in lakes:
        check_new_files(lake, file_lines)
    print(
        "live records: " + ", ".join(f"{lake.name} lake {live_records(lake):,}" for lake in lakes)
    )
    if repeats > 1:
        print(f"median of {repeats} runs of each kind:")
    report(lakes)


if __name__ == "__main__":
    main()
