"""Run history in Delta: the control schema's `run_events` and `run_nodes` (appends only).

The rules (which open runs are dead, a run's status, rows written from the Delta log) are in
profile_lake.run_history; this module reads and appends the tables.
"""

from __future__ import annotations

import os
import random
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.types import (
    DoubleType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from profile_lake.delta_log import table_file_count
from profile_lake.locks.process import process_alive, process_started
from profile_lake.run_history import (
    RUN_ORIGIN_ENV,
    STREAMS,
    WATCH_COMMAND,
    NodeResult,
    OpenRun,
    StreamLines,
    history_needs_compaction,
    killed_runs,
    lines_maps,
    node_row,
    recent_commits,
    recorded_command,
    remember_run_summary,
    rows_written,
    run_status,
    run_summary,
    table_log_dir,
    writes_table,
)

EVENTS_TABLE = "run_events"
NODES_TABLE = "run_nodes"
# the staging model of each stream (the landing table is named after the stream)
STAGING_MODELS = {
    "records": "stg_records__changes",
    "id_mutations": "stg_id_mutations__renames",
    "entity_names": "stg_entity_names__updates",
    "erasures": "stg_erasures__requests",
}
# Delta's auto-compaction: the tables' property, and Spark's setting that overrides it. Where
# a history table's log is on this machine its file count is read from the log and the table is
# compacted by it (run_history.HISTORY_MAX_FILES) with the setting off; elsewhere (a warehouse
# off this machine) the property compacts it.
TABLE_PROPERTIES = "'delta.autoOptimize.autoCompact' = 'true'"
AUTO_COMPACT_SETTING = "spark.databricks.delta.autoCompact.enabled"
# the commands that change what tenant_lag measures
LAG_COMMANDS = ("dbt run", "dbt build", WATCH_COMMAND)
_COUNTS = MapType(StringType(), LongType())
EVENT_SCHEMA = StructType(
    [
        StructField("run_id", StringType(), False),
        StructField("event", StringType(), False),
        StructField("command", StringType()),
        StructField("target_name", StringType()),
        StructField("tenants", StringType()),
        StructField("host", StringType()),
        StructField("pid", IntegerType()),
        StructField("process_started", StringType()),
        StructField("status", StringType(), False),
        StructField("message", StringType()),
        StructField("files_ingested", LongType()),
        StructField("lines_landed", _COUNTS),
        StructField("lines_accepted", _COUNTS),
        StructField("lines_quarantined", _COUNTS),
        StructField("lag_minutes", MapType(StringType(), DoubleType())),
        StructField("nodes_run", LongType()),
        StructField("nodes_failed", LongType()),
        StructField("seconds", DoubleType()),
        StructField("started_at", TimestampType(), False),
        StructField("ended_at", TimestampType()),
        StructField("event_at", TimestampType(), False),
    ]
)
NODE_SCHEMA = StructType(
    [
        StructField("run_id", StringType(), False),
        StructField("unique_id", StringType(), False),
        StructField("node_name", StringType()),
        StructField("resource_type", StringType()),
        StructField("status", StringType()),
        StructField("message", StringType()),
        StructField("rows_affected", LongType()),
        StructField("failures", LongType()),
        StructField("seconds", DoubleType()),
        StructField("started_at", TimestampType()),
        StructField("completed_at", TimestampType()),
    ]
)


@dataclass(frozen=True)
class RunStart:
    control_schema: str
    run_id: str
    command: str
    target_name: str
    tenants: str
    stale_after: timedelta


def _ensure_table(spark: SparkSession, table: str, schema: StructType, comment: str) -> None:
    columns = ", ".join(
        f"{field.name} {field.dataType.simpleString()}{'' if field.nullable else ' not null'}"
        for field in schema.fields
    )
    for attempt in range(5):
        try:
            spark.sql(f"create schema if not exists {table.rsplit('.', 1)[0]}")
            spark.sql(
                f"create table if not exists {table} ({columns}) using delta comment '{comment}' "
                f"tblproperties ({TABLE_PROPERTIES})"
            )
            return
        except Exception as error:  # two processes creating it at once
            text = str(error)
            racing = any(
                code in text
                for code in (
                    "Concurrent",
                    "already exists",
                    "DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION",
                    "DELTA_PROTOCOL_CHANGED",
                )
            )
            if not racing or attempt == 4:
                raise
            time.sleep(random.uniform(0.2, 1.0))


def _append(spark: SparkSession, table: str, schema: StructType, rows: list[dict]) -> None:
    """Append `rows`; where the table's log is on this machine, with Delta's auto-compaction off
    and the table compacted once it holds HISTORY_MAX_FILES files. The run hooks call this while
    no node runs, so switching the session's setting races no other write."""
    if not rows:
        return
    schema_name, identifier = table.rsplit(".", 1)
    warehouse = spark.conf.get("spark.sql.warehouse.dir", "spark-warehouse")
    table_path = table_log_dir(warehouse, schema_name, identifier).parent
    file_count = table_file_count(table_path)
    write = spark.createDataFrame(rows, schema).write.format("delta").mode("append")
    if file_count is None:  # not on this machine, or no checksum: the table's property decides
        write.saveAsTable(table)
        return
    before = spark.conf.get(AUTO_COMPACT_SETTING, None)
    spark.conf.set(AUTO_COMPACT_SETTING, "false")
    try:
        write.saveAsTable(table)
    finally:
        if before is None:
            spark.conf.unset(AUTO_COMPACT_SETTING)
        else:
            spark.conf.set(AUTO_COMPACT_SETTING, before)
    if history_needs_compaction(table_file_count(table_path)):
        try:
            spark.sql(f"optimize {table}")
        except Exception as error:  # another run compacting it at once: the next run will
            if "Concurrent" not in str(error):
                raise


def _open_runs(spark: SparkSession, table: str) -> list[OpenRun]:
    # times as micros since the epoch: collect() would turn timestamps into local times
    rows = spark.sql(
        "select run_id, host, pid, process_started, unix_micros(started_at) as started_micros "
        f"from {table} group by all "
        "having max(case when event != 'started' then 1 else 0 end) = 0"
    ).collect()
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    return [
        OpenRun(
            row.run_id,
            row.host or "",
            int(row.pid or 0),
            row.process_started or "",
            epoch + timedelta(microseconds=row.started_micros),
        )
        for row in rows
    ]


def record_start(
    spark: SparkSession, start: RunStart, progress: Callable[[str], None]
) -> dict[str, Any]:
    """Append the run's `started` event, and a `killed` event for each earlier run found dead
    (one commit). Returns the started event, which record_end completes. The builds of a
    `profile-lake watch` process are recorded as its (run_history.recorded_command)."""
    events = f"{start.control_schema}.{EVENTS_TABLE}"
    _ensure_table(spark, events, EVENT_SCHEMA, "dbt runs on the lake: one row per event")
    _ensure_table(spark, f"{start.control_schema}.{NODES_TABLE}", NODE_SCHEMA, "dbt run nodes")
    now = datetime.now(UTC)
    host = socket.gethostname()
    dead = killed_runs(_open_runs(spark, events), now, host, process_alive, start.stale_after)
    rows = []
    for run, reason in dead:
        progress(f"run history: run {run.run_id} was killed ({reason})")
        started = spark.sql(
            f"select * from {events} where run_id = '{run.run_id}' and event = 'started'"
        ).collect()
        for row in started[:1]:
            killed = {"event": "killed", "status": "killed", "message": reason}
            times = {"started_at": run.started_at, "event_at": now}
            rows.append({**row.asDict(), **killed, **times})
    pid = os.getpid()
    started_event = {
        "run_id": start.run_id,
        "event": "started",
        "command": recorded_command(start.command, os.environ.get(RUN_ORIGIN_ENV)),
        "target_name": start.target_name,
        "tenants": start.tenants,
        "host": host,
        "pid": pid,
        "process_started": process_started(pid),
        "status": "running",
        "started_at": now,
        "event_at": now,
    }
    _append(spark, events, EVENT_SCHEMA, [*rows, started_event])
    return started_event


def stream_lines(spark: SparkSession, schema: str, batch_ids: Sequence[int]) -> dict:
    """Per stream, lines the run's ingest batches staged, and of them the lines the staging
    model has accepted and quarantined (a run that left staging out counts none). One query;
    stream by stream when a staging table is missing."""
    if not batch_ids:
        return {}
    batches = ", ".join(str(int(batch)) for batch in batch_ids)
    queries = {
        stream: (
            f"select '{stream}' as stream, count(*) as landed, 0 as accepted, 0 as quarantined "
            f"from {schema}_landing.{stream} where ingest_batch_id in ({batches})",
            f"select '{stream}' as stream, 0 as landed, count_if(is_accepted) as accepted, "
            # an erasure's erased rows are neither (SPEC.md section 7)
            "count_if(not is_accepted and not coalesce(is_erased, false)) as quarantined "
            f"from {schema}_staging.{STAGING_MODELS[stream]} where ingest_batch_id in ({batches})",
        )
        for stream in STREAMS
    }
    try:
        parts = [query for pair in queries.values() for query in pair]
        rows = _sum_lines(spark, parts)
    except Exception:  # a table not built yet
        rows = {}
        for pair in queries.values():
            for query in pair:
                try:
                    found = _sum_lines(spark, [query])
                except Exception:
                    continue
                for stream, lines in found.items():
                    rows[stream] = _add(rows.get(stream), lines)
    return rows


def _sum_lines(spark: SparkSession, queries: list[str]) -> dict[str, StreamLines]:
    union = " union all ".join(f"({query})" for query in queries)
    rows = spark.sql(
        "select stream, sum(landed) as landed, sum(accepted) as accepted, "
        f"sum(quarantined) as quarantined from ({union}) group by stream"
    ).collect()
    return {
        row.stream: StreamLines(int(row.landed), int(row.accepted), int(row.quarantined))
        for row in rows
    }


def _add(a: StreamLines | None, b: StreamLines) -> StreamLines:
    if a is None:
        return b
    return StreamLines(a.landed + b.landed, a.accepted + b.accepted, a.quarantined + b.quarantined)


def tenant_lags(spark: SparkSession, schema: str) -> dict[str, float]:
    """tenant_lag's lag per tenant (tenants with a lag), as the run leaves it."""
    try:
        rows = spark.sql(
            f"select tenant_id, cast(lag_minutes as double) as lag from {schema}.tenant_lag "
            "where lag_minutes is not null"
        ).collect()
    except Exception:  # not built yet
        return {}
    return {row.tenant_id: row.lag for row in rows}


def record_end(
    spark: SparkSession,
    started_event: dict[str, Any],
    control_schema: str,
    schema: str,
    nodes: list[NodeResult],
    ingest_batches: list[tuple[int, int]],
) -> dict[str, Any]:
    """Append the run's `ended` event and its nodes' rows; returns the ended event (and
    keeps its summary for `profile-lake watch`, which runs dbt in this process)."""
    now = datetime.now(UTC)
    warehouse = spark.conf.get("spark.sql.warehouse.dir")
    node_rows = []
    for node in nodes:
        rows_affected = None
        if writes_table(node) and node.started_at and node.completed_at:
            commits = recent_commits(table_log_dir(warehouse, node.schema, node.identifier))
            rows_affected = rows_written(commits, node.started_at, node.completed_at)
        node_rows.append(node_row(started_event["run_id"], node, rows_affected))
    lines = lines_maps(stream_lines(spark, schema, [batch for batch, _ in ingest_batches]))
    ended = {
        **started_event,
        **lines,
        "event": "ended",
        "status": run_status(node.status for node in nodes),
        "files_ingested": sum(files for _, files in ingest_batches),
        "lag_minutes": tenant_lags(spark, schema)
        if started_event["command"] in LAG_COMMANDS
        else None,
        "nodes_run": len(nodes),
        "nodes_failed": sum(run_status([node.status]) == "error" for node in nodes),
        "seconds": round((now - started_event["started_at"]).total_seconds(), 3),
        "ended_at": now,
        "event_at": now,
    }
    _append(spark, f"{control_schema}.{NODES_TABLE}", NODE_SCHEMA, node_rows)
    _append(spark, f"{control_schema}.{EVENTS_TABLE}", EVENT_SCHEMA, [ended])
    remember_run_summary(run_summary(ended, node_rows))
    return ended
