"""Records at scale, through the real dbt models int_record_states and records (issue 4):

(a) the full rebuild of a 10M-record state (`dbt run --select int_record_states records
    --full-refresh`);
(b) one ingest batch of 1.7M CDC events (updates, late events, deletes, new records) applied by
    `dbt run --select int_record_states records record_notifications` (goal <= 120 s);
(c) an incremental apply of 1% changed records (100K) against the full rebuild of (a)
    (goal: ratio <= 0.10);
(d) the two layouts of `records` (var records_layout): MERGE apply of 1% changed records, with
    and without deletion vectors, look-ups by tenant + primary_id and by time range after each
    layout's OPTIMIZE, and whether two MERGEs of different tenants at once conflict (two runs
    scoped to different tenants); prints which wins.
(b) and (c) also run a second time with deletion vectors on in both tables (when the config
does not have them on already), from the same starting versions (Delta RESTORE); (c) runs once
more with the change feed turned on on records, as it was before issue 38, to show what the
feed cost its MERGE (records has no feed now: record_notifications and the identity graph
read the versions of int_record_states).

    .venv/bin/python bench/bench_records_apply.py [--scale 1] [--tenants 16] [--repeats 2]
        [--skip-b]

The changes are written straight into the staged table stg_records__changes (the schema the
model produced, one ingest batch per step): going through landing files would time the
ingest, not the records path. Everything else runs through the project's own models. Per-node
times come from dbt's run results; MERGE metrics from the Delta history. Everything lives in a
temporary lake under /tmp, removed at the end unless --keep.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthetic_records import FULL_PAYLOAD, PATCH_PAYLOAD, uniform

SCHEMA = "bench"
STATES = f"{SCHEMA}_intermediate.int_record_states"
RECORDS = f"{SCHEMA}.records"
STAGED = f"{SCHEMA}_staging.stg_records__changes"
LAYOUTS = ("partitioned_zorder", "liquid")
APPLY_GOAL_SECONDS = 120.0
RATIO_GOAL = 0.10
FIRST_EVENT = "timestamp'2025-01-01 00:00:00'"
YEAR_SECONDS = 365 * 86_400


def record_columns(index: str) -> str:
    """The columns of record number `index` that never change: tenant (skewed: tenant t00
    holds about a quarter of the records), record_id, identities, type."""
    return f"""
        concat('t', lpad(cast(floor(pow({uniform(index, 1)}, 2) * {{tenants}}) as string), 2, '0'))
            as tenant_id,
        concat('rec-', {index}) as record_id,
        concat('email:u', {index} div 3, '@x.test') as primary_id,
        array(concat('cookie:c', {index})) as related_ids,
        if({index} % 5 = 0, 'event', 'profile') as record_type"""


@dataclass(frozen=True)
class Batch:
    """One synthetic ingest batch: SQL selecting its events (column `event` numbers them)."""

    number: int
    label: str
    events_sql: str


def initial_batch(records: int) -> Batch:
    """One full upsert per record, event times spread over a year."""
    return Batch(
        1,
        f"{records:,} records, one upsert each",
        f"""
        select
            {record_columns("id")},
            id as event,
            'upsert' as op,
            {FULL_PAYLOAD.format(n="id", u3=uniform("id", 3))} as payload,
            {FIRST_EVENT} + make_interval(0, 0, 0, 0, 0, 0,
                floor({uniform("id", 2)} * {YEAR_SECONDS})) as event_ts,
            id % 10 as seq
        from range({records})
        """,
    )


def cdc_batch(records: int, events: int) -> Batch:
    """`events` CDC events (1.7M at scale 1): 70% patches of random existing records (a record
    may get several; one in ten is late, older than the record's state), 6% deletes (records
    numbered 17 mod 100), 24% upserts creating new records (1.33 events each)."""
    patches, deletes = events * 70 // 100, events * 6 // 100
    creates = events - patches - deletes
    new_records = max(1, creates * 3 // 4)
    late = f"if({uniform('event', 5)} < 0.1, -1, 1)"
    return Batch(
        2,
        f"{events:,} CDC events: {patches:,} patches, {deletes:,} deletes, "
        f"{creates:,} upserts of {new_records:,} new records",
        f"""
        select
            {record_columns("record")},
            event,
            'upsert' as op,
            {PATCH_PAYLOAD.format(u3=uniform("event", 3))} as payload,
            {FIRST_EVENT} + make_interval(0, 0, 0, 0, 0, 0, {YEAR_SECONDS}
                + {late} * floor({uniform("event", 2)} * 86400 * 30)) as event_ts,
            event % 10 as seq
        from (
            select id as event, cast(floor({uniform("id", 4)} * {records}) as bigint) as record
            from range({patches})
        )

        union all

        select
            {record_columns("record")},
            event,
            'delete' as op,
            cast(null as string) as payload,
            {FIRST_EVENT} + make_interval(0, 0, 0, 0, 0, 0, {YEAR_SECONDS} + 86400 * 31)
                as event_ts,
            0 as seq
        from (select {patches} + id as event, id * 100 + 17 as record from range({deletes}))

        union all

        select
            {record_columns("record")},
            event,
            'upsert' as op,
            if(event % 4 = 0, {PATCH_PAYLOAD.format(u3=uniform("event", 3))},
                {FULL_PAYLOAD.format(n="record", u3=uniform("event", 3))})
                as payload,
            {FIRST_EVENT} + make_interval(0, 0, 0, 0, 0, 0, {YEAR_SECONDS}
                + floor({uniform("event", 2)} * 86400 * 30)) as event_ts,
            event % 10 as seq
        from (
            select {patches + deletes} + id as event, {records} + id % {new_records} as record
            from range({creates})
        )
        """,
    )


def one_percent_batch(number: int, records: int, residue: int) -> Batch:
    """1% of the records changed, each once (numbered `residue` mod 100, so never one of the
    deleted ones): 95% patches, 5% deletes, all newer than anything before."""
    changed = records // 100
    return Batch(
        number,
        f"{changed:,} changed records (1%): 95% patches, 5% deletes",
        f"""
        select
            {record_columns("record")},
            event,
            if(event % 20 = 0, 'delete', 'upsert') as op,
            if(event % 20 = 0, null, {PATCH_PAYLOAD.format(u3=uniform("event", 3))})
                as payload,
            {FIRST_EVENT} + make_interval(0, 0, 0, 0, 0, 0, {YEAR_SECONDS} + 86400 * 40
                + {number} * 86400 + id % 86400) as event_ts,
            0 as seq
        from (
            select id, {number} * 100000000 + id as event, id * 100 + {residue} as record
            from range({changed})
        )
        """,
    )


# --------------------------------------------------------------------------------------------
# Spark and dbt plumbing
# --------------------------------------------------------------------------------------------


def spark_session() -> Any:
    """The SparkSession dbt's session connection created in this process."""
    from pyspark.sql import SparkSession

    return SparkSession.builder.getOrCreate()


def stage(batch: Batch, tenants: int) -> float:
    """Append a batch to stg_records__changes as accepted lines, in the model's own schema (any
    column this script does not set is null). Returns seconds."""
    from pyspark.sql import functions as F

    spark = spark_session()
    started = time.perf_counter()
    events = spark.sql(batch.events_sql.replace("{tenants}", str(tenants)))
    generated = {
        "ingest_batch_id": F.lit(batch.number),
        "staged_tenant_id": F.col("tenant_id"),
        "source_file": F.concat(F.lit(f"bench/batch-{batch.number}-"), F.col("tenant_id")),
        "line_number": F.col("event"),
        "is_accepted": F.lit(True),
        "problems": F.array(),
        "ingested_at": F.current_timestamp(),
    }
    target = spark.table(STAGED).schema
    columns = []
    for column in target:
        value = generated.get(column.name)
        if value is None:
            value = F.col(column.name) if column.name in events.columns else F.lit(None)
        columns.append(value.cast(column.dataType).alias(column.name))
    events.select(*columns).write.format("delta").mode("append").saveAsTable(STAGED)
    return time.perf_counter() - started


@dataclass
class DbtTiming:
    """Wall time of one dbt invocation and the execution time of each node."""

    seconds: float
    nodes: dict[str, float] = field(default_factory=dict)

    def describe(self) -> str:
        nodes = ", ".join(
            f"{name.removeprefix('profile_lake-')} {seconds:.1f} s"
            for name, seconds in self.nodes.items()
        )
        # other people's Spark jobs share the 2 cores: the load says how noisy a figure is
        return f"{self.seconds:7.1f} s  ({nodes}; load {os.getloadavg()[0]:.1f})"


class Lake:
    """The benchmark's lake: dbt invocations on the project, in this process."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.landing = root / "landing"
        for stream in ("records", "id_mutations", "entity_names"):
            (self.landing / stream).mkdir(parents=True, exist_ok=True)
        os.environ.update(
            PROFILE_LAKE_HOME=str(root / "lake"),
            PROFILE_LAKE_LANDING=str(self.landing),
            PROFILE_LAKE_SCHEMA=SCHEMA,
        )

    def dbt(self, *args: str, layout: str | None = None) -> DbtTiming:
        from plumbing import run_dbt

        extra = ["--log-path", str(self.root / "logs"), "--quiet"]
        if layout is not None:
            extra += ["--vars", json.dumps({"records_layout": layout})]
        started = time.perf_counter()
        run = run_dbt([*args, *extra], target_path=self.root / "target")
        seconds = time.perf_counter() - started
        results = run.result.result
        nodes = {
            item.node.name: item.execution_time
            for item in getattr(results, "results", [])
            if hasattr(item, "node")  # a run-operation's result has no node
        }
        return DbtTiming(seconds, nodes)


def sql(statement: str) -> list[Any]:
    return spark_session().sql(statement).collect()


def version(table: str) -> int:
    return sql(f"describe history {table} limit 1")[0]["version"]


def merge_metrics(table: str) -> dict[str, str] | None:
    """The operation metrics of the table's newest commit, if it is a MERGE."""
    rows = sql(f"describe history {table} limit 1")
    return rows[0]["operationMetrics"] if rows and rows[0]["operation"] == "MERGE" else None


def last_merge_metrics(table: str) -> str:
    """The newest MERGE of a table, in a few numbers; or its newest append (int_record_states
    appends each run's versions)."""
    metrics = merge_metrics(table)
    if metrics is None:
        newest = sql(f"describe history {table} limit 1")[0]
        if newest["operation"] == "WRITE" and newest["operationParameters"].get("mode") == "Append":
            appended = newest["operationMetrics"]
            return (
                f"append: {appended['numOutputRows']} rows in {appended['numFiles']} files "
                f"({int(appended['numOutputBytes']) / 2**20:.0f} MiB)"
            )
        return "no MERGE"
    return (
        f"MERGE {int(metrics['executionTimeMs']) / 1000:.1f} s "
        f"(scan {int(metrics.get('scanTimeMs', 0)) / 1000:.1f} s, "
        f"rewrite {int(metrics.get('rewriteTimeMs', 0)) / 1000:.1f} s): "
        f"{metrics['numTargetRowsUpdated']} updated, {metrics['numTargetRowsDeleted']} deleted, "
        f"{metrics['numTargetRowsInserted']} inserted, {metrics['numTargetRowsCopied']} copied; "
        f"files {metrics['numTargetFilesRemoved']} removed, {metrics['numTargetFilesAdded']} "
        f"added; {metrics.get('numTargetDeletionVectorsAdded', '0')} deletion vectors added"
    )


def check_patches_updated(records: int, cdc_events: int, updated: int) -> None:
    """The workload is what it says: the batch's patches (70% of its events) update existing
    records rather than inserting new ones. `updated` comes from the batch's records MERGE.
    A patch picks its record from a uniform of a million values, so it reaches at most a
    million records (every tenth at scale 1), some of them several times."""
    patches = cdc_events * 70 // 100
    reachable = min(records, 1_000_000)
    distinct = reachable * (1 - math.exp(-patches / reachable))
    assert updated >= distinct * 0.9, (
        f"the CDC batch updated {updated:,} records, not about {distinct:,.0f}: its patches do "
        "not reach the existing records (tenant or record_id differ from batch 1)"
    )


def restore(table: str, to_version: int) -> None:
    if version(table) != to_version:
        sql(f"restore table {table} to version as of {to_version}")


def table_shape(table: str) -> str:
    detail = sql(f"describe detail {table}")[0]
    layout = (
        f"clustered by {', '.join(detail['clusteringColumns'])}"
        if detail["clusteringColumns"]
        else f"partitioned by {', '.join(detail['partitionColumns']) or 'nothing'}"
    )
    return f"{detail['numFiles']} files, {detail['sizeInBytes'] / 2**20:,.0f} MiB, {layout}"


def state_rows() -> str:
    """Rows of int_record_states against records in it (each run appends new versions)."""
    rows, keys = sql(f"select count(*), count(distinct tenant_id, record_id) from {STATES}")[0]
    return f"{rows:,} versions of {keys:,} records"


def best(values: list[float]) -> float:
    return min(values)


# --------------------------------------------------------------------------------------------
# The measurements
# --------------------------------------------------------------------------------------------


@dataclass
class LayoutFigures:
    rebuild: float = 0.0
    optimize: float = 0.0
    shape: str = ""
    by_primary_id: float = 0.0
    by_time_range: float = 0.0
    merge: dict[bool, list[float]] = field(default_factory=lambda: {True: [], False: []})
    merge_metrics: dict[bool, str] = field(default_factory=dict)
    concurrent_merges: str = ""


def look_ups(records: int, samples: int) -> tuple[float, float]:
    """Median seconds of a look-up by tenant + primary_id and of one by tenant + one hour of
    event_ts, each over `samples` different keys drawn from the table (the same keys for both
    layouts: drawn by record number)."""
    record_ids = ", ".join(f"'rec-{(n * 7919 + 11) % records}'" for n in range(samples))
    keys = sql(
        f"select tenant_id, primary_id, event_ts from {RECORDS} where record_id in ({record_ids})"
    )
    by_id, by_time = [], []
    for key in keys:
        started = time.perf_counter()
        sql(
            f"select record_id, payload from {RECORDS} "
            f"where tenant_id = '{key['tenant_id']}' and primary_id = '{key['primary_id']}'"
        )
        by_id.append(time.perf_counter() - started)
        started = time.perf_counter()
        sql(
            f"select record_id, primary_id, payload from {RECORDS} "
            f"where tenant_id = '{key['tenant_id']}' and event_ts >= timestamp'{key['event_ts']}' "
            f"and event_ts < timestamp'{key['event_ts']}' + interval 1 hour"
        )
        by_time.append(time.perf_counter() - started)
    return statistics.median(by_id), statistics.median(by_time)


def concurrent_tenant_merges() -> str:
    """Two MERGEs of different tenants at once, as two runs scoped to different tenants do
    (var tenants): the larger one on t00 starts first, a small one on t01 commits meanwhile.
    Each names its tenant as a literal, like delta_merge_upserts_and_deletes."""
    import threading

    def merge(tenant: str, rows: str, delay: float, outcome: dict[str, str]) -> None:
        time.sleep(delay)
        try:
            sql(f"""
                merge into {RECORDS} as target
                using (
                    select tenant_id, record_id, concat(payload, ' ') as payload from {RECORDS}
                    where tenant_id = '{tenant}' and record_id like '{rows}'
                ) as source
                on target.tenant_id = source.tenant_id and target.record_id = source.record_id
                    and target.tenant_id in ('{tenant}')
                when matched then update set target.payload = source.payload
            """)
            outcome[tenant] = "committed"
        except Exception as error:  # the conflict is the finding, not a failure of the bench
            found = re.search(r"(\w+Exception): \[(\w+)", str(error))
            outcome[tenant] = f"failed: {found.group(1)} {found.group(2)}" if found else repr(error)

    before = version(RECORDS)
    outcome: dict[str, str] = {}
    threads = [
        threading.Thread(target=merge, args=("t00", "%3", 0.0, outcome)),
        threading.Thread(target=merge, args=("t01", "%1234%", 2.0, outcome)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    commits = sql(f"describe history {RECORDS} limit {version(RECORDS) - before}")
    overlapped = any(row["readVersion"] < row["version"] - 1 for row in commits)
    return (
        f"t00 {outcome['t00']}, t01 {outcome['t01']}"
        f"{'' if overlapped or len(commits) < 2 else ' (did not overlap: no finding)'}"
    )


def compare_layouts(
    lake: Lake, layouts: list[str], records: int, states_before: int, repeats: int
) -> dict[str, LayoutFigures]:
    """Per layout: records rebuilt from the states, OPTIMIZEd, looked up, then the staged 1%
    batch applied `repeats` times with deletion vectors on and off (both tables restored to
    their versions before the apply each time)."""
    figures: dict[str, LayoutFigures] = {}
    for layout in layouts:
        found = figures[layout] = LayoutFigures()
        restore(STATES, states_before)
        # Delta will not replace a liquid-clustered table by a partitioned one: drop first.
        sql(f"drop table if exists {RECORDS}")
        found.rebuild = lake.dbt("run", "--select", "records", layout=layout).nodes["records"]
        started = time.perf_counter()
        lake.dbt("run-operation", "optimize_table", "--args", "model_name: records", layout=layout)
        found.optimize = time.perf_counter() - started
        found.shape = table_shape(RECORDS)
        lake.dbt("run", "--select", "records", layout=layout)  # warm-up: nothing to change
        found.by_primary_id, found.by_time_range = look_ups(records, 9)
        optimized = version(RECORDS)
        for repeat in range(repeats):
            for deletion_vectors in (True, False):
                restore(STATES, states_before)
                restore(RECORDS, optimized)
                sql(
                    f"alter table {RECORDS} set tblproperties "
                    f"('delta.enableDeletionVectors' = '{str(deletion_vectors).lower()}')"
                )
                run = lake.dbt("run", "--select", "int_record_states", "records", layout=layout)
                found.merge[deletion_vectors].append(run.nodes["records"])
                found.merge_metrics[deletion_vectors] = last_merge_metrics(RECORDS)
                print(
                    f"    {layout}, deletion vectors {'on ' if deletion_vectors else 'off'}, "
                    f"run {repeat + 1}: {run.describe()}"
                )
        found.concurrent_merges = concurrent_tenant_merges()
    return figures


def report_layouts(figures: dict[str, LayoutFigures]) -> None:
    print("(d) layouts of records (after each one's OPTIMIZE; best of the repeats)")
    for layout, found in figures.items():
        print(f"  {layout}: {found.shape}")
        print(f"    {'rebuild of records from the states':<40} {found.rebuild:8.1f} s")
        print(f"    {'OPTIMIZE (run-operation optimize_table)':<40} {found.optimize:8.1f} s")
        for deletion_vectors in (True, False):
            label = f"MERGE apply of 1%, deletion vectors {'on' if deletion_vectors else 'off'}"
            seconds = best(found.merge[deletion_vectors])
            print(f"    {label:<40} {seconds:8.1f} s   [{found.merge_metrics[deletion_vectors]}]")
        print(f"    {'look-up tenant + primary_id (median)':<40} {found.by_primary_id:8.3f} s")
        print(f"    {'look-up tenant + 1 hour of event_ts':<40} {found.by_time_range:8.3f} s")
        print(f"    {'concurrent MERGEs of two tenants':<40} {found.concurrent_merges}")
    if len(figures) < 2:
        return
    measures = {
        "MERGE apply, deletion vectors on": lambda f: best(f.merge[True]),
        "MERGE apply, deletion vectors off": lambda f: best(f.merge[False]),
        "look-up by tenant + primary_id": lambda f: f.by_primary_id,
        "look-up by tenant + time range": lambda f: f.by_time_range,
        "rebuild + OPTIMIZE": lambda f: f.rebuild + f.optimize,
    }
    first, second = figures
    for label, measure in measures.items():
        a, b = measure(figures[first]), measure(figures[second])
        winner, ratio = (first, b / a) if a <= b else (second, a / b)
        print(f"  {label:<36} {winner} wins ({ratio:.2f}x)")


def print_ratio(incremental: float, rebuild: float) -> None:
    ratio = incremental / rebuild
    verdict = "meets" if ratio <= RATIO_GOAL else "misses"
    print(
        f"    ratio incremental/full rebuild: {incremental:.1f} / {rebuild:.1f} s = {ratio:.3f}"
        f" ({verdict} the goal <= {RATIO_GOAL})"
    )


def deletion_vectors(table: str) -> str:
    properties = sql(f"describe detail {table}")[0]["properties"]
    return properties.get("delta.enableDeletionVectors", "false")


def set_deletion_vectors(table: str, value: str) -> None:
    sql(f"alter table {table} set tblproperties ('delta.enableDeletionVectors' = '{value}')")


@dataclass
class Variant:
    run: DbtTiming
    records_merge: str
    states_merge: str
    records_updated: int


def variant(run: DbtTiming) -> Variant:
    """A run's figures, read from the newest MERGE of each table right after it."""
    updated = int((merge_metrics(RECORDS) or {}).get("numTargetRowsUpdated", 0))
    return Variant(run, last_merge_metrics(RECORDS), last_merge_metrics(STATES), updated)


def with_and_without_deletion_vectors(
    lake: Lake, selection: list[str]
) -> tuple[Variant, Variant | None]:
    """Run `selection` as configured; then, unless both tables already have deletion vectors
    on, restore int_record_states and records to their versions before, turn deletion vectors
    on for both and run int_record_states and records again (record_notifications is left
    out: the change feed it would read now holds a RESTORE). The tables end up restored to
    the first run's versions."""
    tables = (STATES, RECORDS)
    before = {table: version(table) for table in tables}
    configured = {table: deletion_vectors(table) for table in tables}
    run = lake.dbt("run", "--select", *selection)
    as_configured = variant(run)
    if all(value == "true" for value in configured.values()):
        return as_configured, None
    after = {table: version(table) for table in tables}
    for table in tables:
        restore(table, before[table])
        set_deletion_vectors(table, "true")
    run = lake.dbt("run", "--select", "int_record_states", "records")
    with_vectors = variant(run)
    # back to the first run's versions: the same rows, the configured properties, and no
    # deletion vector in a table that does not allow them (a later RESTORE would refuse it)
    for table in tables:
        restore(table, after[table])
    return as_configured, with_vectors


def with_change_feed(lake: Lake, before: dict[str, int]) -> Variant:
    """What records' change feed cost its MERGE before issue 38 (the feed writes update
    pre-images and deleted rows whole, so the MERGE reads the payloads of the files it
    touches): restore int_record_states and records to the versions `before`, turn the feed on
    on records, run both again, and restore them to the versions they had (feed off again)."""
    tables = (STATES, RECORDS)
    after = {table: version(table) for table in tables}
    for table in tables:
        restore(table, before[table])
    sql(f"alter table {RECORDS} set tblproperties ('delta.enableChangeDataFeed' = 'true')")
    with_feed = variant(lake.dbt("run", "--select", "int_record_states", "records"))
    for table in tables:
        restore(table, after[table])
    feed = sql(f"describe detail {RECORDS}")[0]["properties"].get("delta.enableChangeDataFeed")
    assert feed != "true", f"{RECORDS} was restored with the change feed on ({feed})"
    return with_feed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=float, default=1.0, help="1 = 10M records")
    parser.add_argument("--tenants", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=2, help="MERGE applies per layout")
    parser.add_argument("--layouts", default=",".join(LAYOUTS))
    parser.add_argument(
        "--through", choices=["b", "all"], default="all", help="stop after (b), or run all"
    )
    parser.add_argument(
        "--skip-b",
        action="store_true",
        help="leave out (b) and the first record_notifications run: (c) alone, sooner",
    )
    parser.add_argument("--keep", action="store_true", help="keep the lake (for profiling)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-records-apply-", dir="/tmp"))
    try:
        run(Lake(root), args)
    finally:
        if args.keep:
            print(f"lake kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def run_b(lake: Lake, records: int, cdc_events: int, tenants: int) -> None:
    """The first record_notifications run, then (b): one batch of CDC events."""
    first = lake.dbt("run", "--select", "record_notifications")
    print(f"    first record_notifications run (every record an insert): {first.describe()}")

    batch = cdc_batch(records, cdc_events)
    print(f"  staged batch 2 ({batch.label}) in {stage(batch, tenants):.1f} s")
    apply, apply_dv = with_and_without_deletion_vectors(
        lake, ["int_record_states", "records", "record_notifications"]
    )
    verdict = "meets" if apply.run.seconds <= APPLY_GOAL_SECONDS else "misses"
    print(f"(b) apply of {cdc_events:,} CDC events, as configured: {apply.run.describe()}")
    print(f"    {verdict} the goal <= {APPLY_GOAL_SECONDS:.0f} s")
    print(f"    records {apply.records_merge}")
    print(f"    int_record_states {apply.states_merge}")
    check_patches_updated(records, cdc_events, apply.records_updated)
    if apply_dv is not None:
        print(f"    the same with deletion vectors on both tables: {apply_dv.run.describe()}")
        print(f"    records {apply_dv.records_merge}")
        print(f"    int_record_states {apply_dv.states_merge}")


def run(lake: Lake, args: argparse.Namespace) -> None:
    records = int(10_000_000 * args.scale)
    cdc_events = int(1_700_000 * args.scale)
    layouts = [layout.strip() for layout in args.layouts.split(",") if layout.strip()]

    # the staged table, empty, in the schema the model produces
    lake.dbt("seed", "--select", "tenants")
    lake.dbt("run", "--select", "stg_records__changes")
    print(f"records apply: scale {args.scale} ({records:,} records, {args.tenants} tenants)")

    batch = initial_batch(records)
    print(f"  staged batch 1 ({batch.label}) in {stage(batch, args.tenants):.1f} s")
    rebuild = lake.dbt("run", "--select", "int_record_states", "records", "--full-refresh")
    print(f"(a) full rebuild of int_record_states + records: {rebuild.describe()}")
    print(f"    records: {table_shape(RECORDS)}; states: {table_shape(STATES)}")
    if not args.skip_b:
        run_b(lake, records, cdc_events, args.tenants)
    if args.through == "b":
        return
    batch = one_percent_batch(3, records, residue=50)
    print(f"  staged batch 3 ({batch.label}) in {stage(batch, args.tenants):.1f} s")
    before_incremental = {table: version(table) for table in (STATES, RECORDS)}
    incremental, incremental_dv = with_and_without_deletion_vectors(
        lake, ["int_record_states", "records"]
    )
    print(f"(c) apply of 1% changed records, as configured: {incremental.run.describe()}")
    print(f"    records {incremental.records_merge}")
    print(f"    int_record_states {incremental.states_merge}")
    print_ratio(incremental.run.seconds, rebuild.seconds)
    if incremental_dv is not None:
        print(f"    the same with deletion vectors on both tables: {incremental_dv.run.describe()}")
        print(f"    records {incremental_dv.records_merge}")
        print(f"    int_record_states {incremental_dv.states_merge}")
        print_ratio(incremental_dv.run.seconds, rebuild.seconds)
    feed = with_change_feed(lake, before_incremental)
    print(f"    the same with records' change feed on (before issue 38): {feed.run.describe()}")
    print(f"    records {feed.records_merge}")
    print_ratio(feed.run.seconds, rebuild.seconds)
    print(f"    states now: {state_rows()}, {table_shape(STATES)}")
    compaction = lake.dbt("run-operation", "delete_superseded_states")
    print(f"    dbt run-operation delete_superseded_states: {compaction.seconds:.1f} s")
    print(f"    states now: {state_rows()}, {table_shape(STATES)}")

    if not layouts:
        return
    states_before = version(STATES)
    batch = one_percent_batch(4, records, residue=61)
    print(f"  staged batch 4 ({batch.label}) in {stage(batch, args.tenants):.1f} s")
    report_layouts(compare_layouts(lake, layouts, records, states_before, args.repeats))


if __name__ == "__main__":
    main()
