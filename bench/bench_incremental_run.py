"""Incremental runs against the size of the lake (issue 38): the wall time of a whole `dbt build`
on a big lake against the same run on a small lake, both built by the pipeline from generated
landing data (8 tenants each). Two comparisons:
- the default one, about 1M records against about 10K: does a run's cost follow what is new,
  not what the lake holds? Goals, big / small: one-file run <= 1.25, no-new-files run <= 1.1.
- a slope one, e.g. `--big-records 3000000 --small-records 1000000` (any comparison whose small
  lake holds at least 100,000 records): between two lakes both large, does a run's cost still
  grow with the lake, and how steeply? Goals: one-file run <= 1.15, no-new-files run <= 1.1.
Two kinds of run on each lake, after its initial build:
- no new files: the run a scheduler makes when nothing landed;
- one new file: one landing file of 1,000 record lines (about 75% updates of existing records,
  20% new records, half of them linked to an existing identity, 5% deletes), newer than
  everything landed before.
Prints each run's wall time, the ratio big/small of each kind of run against the comparison's
goals, the ten slowest nodes of each run (dbt's run_results.json of that invocation) and the
dbt nodes whose Spark scans read the most data files in that run (files_read_by_node).

    .venv/bin/python bench/bench_incremental_run.py [--scale 1] [--file-lines 1000]
        [--big-records 1000000] [--small-records 10000]
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
import re
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# big / small goals per kind of run (issue 51)
GOALS = {"none": 1.1, "file": 1.25}
# ... and when the small lake is large too (the slope comparison)
SLOPE_GOALS = {"none": 1.1, "file": 1.15}
SLOPE_SMALL_RECORDS = 100_000  # a small lake this large makes the comparison a slope one
BIG_RECORDS = 1_000_000
SMALL_RECORDS = 10_000
FILE_LINES = 1_000
MIN_FILE_LINES = 100
NEW_SHARE = 0.20  # lines of the new file that create a record
DELETE_SHARE = 0.05  # lines that delete an existing record; the rest update one
LINKED_SHARE = 0.5  # new records that name an existing identity among their related ids
SLOWEST = 10
BUSIEST = 12  # nodes listed by data files read
KINDS = {"none": "no new files", "file": "one new file"}
# Spark's SQL status store keeps this many executions (default 1,000); a one-file run on the
# sample makes about 1,600, and files_read_by_node reads a run's after it.
RETAINED_EXECUTIONS = 5_000
# How the adapter names the Spark jobs of a dbt node (adapter/.../session.py); Delta puts its
# own words around it ("Delta: dbt: <node id>: Filtering files for query").
NODE_DESCRIPTION = re.compile(r"\bdbt: ([\w.-]+)")
PARQUET_SCAN = "Scan parquet"  # how a Parquet file scan's plan node is named
FILES_READ = "number of files read"  # its metric of the files it opened
DELTA_LOG_INDEX = "DeltaLogFileIndex"  # the location of Delta's scans of its own log


@dataclass
class Run:
    """One dbt invocation: its wall time, the load meanwhile, its slowest nodes and the tables
    its nodes write (unique id -> relation name, as in run_results.json); for a timed run, the
    data files each node's scans read (files_read_by_node)."""

    seconds: float
    load: float
    slowest: list[tuple[str, float]]
    relations: dict[str, str]
    files_read: dict[str, int] = field(default_factory=dict)
    executions_missing: int = 0
    techniques: dict[str, str] = field(default_factory=dict)


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
        results = json.loads((self.target / "run_results.json").read_text())["results"]
        run = Run(seconds, os.getloadavg()[0], slowest_nodes(results), relations(results))
        run.techniques = mart_techniques(self.schema)
        return run

    def land_next_file(self) -> None:
        """Move the next pending file into the landing folder (a rename: it lands whole)."""
        pending = self.pending.pop(0)
        landed = self.landing / "records" / pending.name
        os.replace(pending, landed)
        self.landed.append(f"records/{pending.name}")


def mart_techniques(schema: str) -> dict[str, str]:
    """The technique each mart of the lake's last run took, with why (its run-history row)."""
    from pyspark.sql import SparkSession

    from profile_lake.run_history import last_run_nodes
    from profile_lake.techniques import technique_said

    spark = SparkSession.builder.getOrCreate()  # dbt's session
    rows = spark.sql(
        f"select run_id, node_name, message, completed_at from {schema}_control.run_nodes"
    ).collect()
    found = {}
    for row in last_run_nodes([row.asDict() for row in rows]):
        said = technique_said(row["message"])
        if said is not None:
            found[str(row["node_name"])] = f"{said[0]} ({said[1]})"
    return found


def slowest_nodes(results: list[dict[str, Any]]) -> list[tuple[str, float]]:
    timed = [(result["unique_id"], float(result["execution_time"] or 0.0)) for result in results]
    return sorted(timed, key=lambda item: -item[1])[:SLOWEST]


def relations(results: list[dict[str, Any]]) -> dict[str, str]:
    return {result["unique_id"]: result.get("relation_name") or "" for result in results}


# --------------------------------------------------------------------------------------------
# Files read, from Spark's SQL status store
# --------------------------------------------------------------------------------------------


def scala_items(collection: Any) -> Iterator[Any]:
    """The elements of a Scala collection, through py4j."""
    iterator = collection.iterator()
    while iterator.hasNext():
        yield iterator.next()


def newest_execution_id(store: Any) -> int:
    """The id of the newest SQL execution in Spark's SQL status store; -1 before any."""
    count = store.executionsCount()
    return store.executionsList(count - 1, 1).apply(0).executionId() if count else -1


def files_read_by_node(store: Any, after: int) -> tuple[dict[str, int], int]:
    """Parquet data files read per dbt node by the SQL executions newer than `after`, and how
    many of those executions the store no longer holds (then the counts fall short).

    Counted: the metric "number of files read" of each Parquet file scan (Spark's
    FileSourceScanExec) of an execution whose description names a dbt node (`dbt: <node id>`,
    the adapter's job description, which Spark also gives the executions Delta starts for the
    node), summed over the node's executions. That metric counts the files left after
    partition pruning and Delta's data skipping: the files the scan opens. Change-feed scans
    count; Delta's scans of its own log (checkpoints, to rebuild a table's state) and scans of
    other formats (the JSON landing files) do not."""
    files: dict[str, int] = {}
    seen = 0
    newest = after
    executions = store.executionsList().reverseIterator()  # newest first
    while executions.hasNext():
        execution = executions.next()
        execution_id = execution.executionId()
        if execution_id <= after:
            break
        seen += 1
        newest = max(newest, execution_id)
        node = NODE_DESCRIPTION.search(execution.description() or "")
        if node is not None:
            read = scan_files_read(store, execution_id)
            files[node.group(1)] = files.get(node.group(1), 0) + read
    return files, newest - after - seen


def scan_files_read(store: Any, execution_id: int) -> int:
    """The data files one SQL execution's Parquet scans read (files_read_by_node)."""
    values = store.executionMetrics(execution_id)  # accumulator id -> value as displayed
    total = 0
    for plan_node in scala_items(store.planGraph(execution_id).allNodes()):
        if not plan_node.name().startswith(PARQUET_SCAN) or DELTA_LOG_INDEX in plan_node.desc():
            continue
        for metric in scala_items(plan_node.metrics()):
            if metric.name() == FILES_READ:
                # A Scala map: its lookup finds the Long key from py4j's Integer too.
                value = values.get(metric.accumulatorId())
                total += int(value.get().replace(",", "")) if value.isDefined() else 0
    return total


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


def sql_status_store() -> Any:
    """The SQL status store of dbt's SparkSession, started here first to keep every execution
    of a run (RETAINED_EXECUTIONS): dbt's connection then gets this session."""
    from profile_lake.spark.session import profile_session

    retained = {"spark.sql.ui.retainedExecutions": str(RETAINED_EXECUTIONS)}
    spark = profile_session("local", **retained)
    return spark._jsparkSession.sharedState().statusStore()


def timed_run(lake: Lake, kind: str, repeat: int, store: Any) -> None:
    if kind == "file":
        lake.land_next_file()
    before = newest_execution_id(store)
    run = lake.build()
    run.files_read, run.executions_missing = files_read_by_node(store, before)
    lake.runs[kind].append(run)
    print(
        f"  {KINDS[kind]}, {lake.name} lake (run {repeat + 1}): {run.seconds:.1f} s "
        f"(load {run.load:.1f}); slowest nodes:",
        flush=True,
    )
    for unique_id, seconds in run.slowest:
        print(f"      {seconds:7.2f} s  {unique_id}")
    if run.techniques:
        print("    the marts' techniques:")
        for name, technique in sorted(run.techniques.items()):
            print(f"      {name}: {technique}")
    print_files_read(run)


def print_files_read(run: Run) -> None:
    total = sum(run.files_read.values())
    print(f"    data files read: {total:,}; the nodes that read the most:")
    reading = [(unique_id, files) for unique_id, files in run.files_read.items() if files]
    for unique_id, files in sorted(reading, key=lambda item: -item[1])[:BUSIEST]:
        relation = run.relations.get(unique_id, "")
        print(f"      {files:7,} files  {unique_id}  {relation}".rstrip())
    if run.executions_missing:
        print(
            f"    ({run.executions_missing} SQL executions of the run no longer in Spark's "
            f"status store: raise RETAINED_EXECUTIONS)"
        )


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
    slope = small.records >= SLOPE_SMALL_RECORDS
    goals = SLOPE_GOALS if slope else GOALS
    print(f"{'slope' if slope else 'default'} comparison, big / small:")
    print(f"{'run':<14} {'big':>10} {'small':>10} {'big/small':>10}")
    for kind, label in KINDS.items():
        on_big = statistics.median(run.seconds for run in big.runs[kind])
        on_small = statistics.median(run.seconds for run in small.runs[kind])
        ratio = on_big / on_small
        line = f"{label:<14} {on_big:8.1f} s {on_small:8.1f} s {ratio:9.2f}x"
        goal = goals[kind]
        line += f"  ({'meets' if ratio <= goal else 'misses'} the goal <= {goal})"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies every size")
    parser.add_argument("--big-records", type=int, default=BIG_RECORDS, help="at scale 1")
    parser.add_argument("--small-records", type=int, default=SMALL_RECORDS, help="at scale 1")
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
    for name, records in (("big", args.big_records), ("small", args.small_records)):
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
    store = sql_status_store()
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
                timed_run(lake, kind, repeat, store)
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
