"""The purge: rewrite every Delta table of a lake so that no file keeps what its current version
no longer holds (SPEC.md section 7, docs/erasure.md).

Per table, in order: REORG ... APPLY (PURGE) where deletion vectors may hide rows (the rows
they mark are still in the data files); VACUUM with no retention (every file the current
version does not reference: older versions' data, change-data and deletion-vector files); a
commit of the purge's own (a table property), checkpointed, so the latest commit holds no row
and the checkpoint holds the current files only (Delta drops a tombstone's statistics from
checkpoints); then every log file before that checkpoint is deleted
(profile_lake.erasure.log_purge), and the purge marker tells change-feed readers whether they
lost changes. The identity graph's round checkpoints of the lake's last runs go too.

It runs under the run locks of every tenant, the ingest and the whole lake, so no run reads a
file it deletes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import SparkSession

from profile_lake import delta_log
from profile_lake.erasure.log_purge import (
    PURGE_MARKER_FILE,
    PurgeMarker,
    has_complete_checkpoint,
    log_files_to_purge,
)
from profile_lake.ingest.staging import LISTING_PARALLELISM
from profile_lake.spark.delta_history import local_table_path, table_properties
from profile_lake.spark.mart_feeds import mart_stamps, record_stamps

PURGED_AT_PROPERTY = "profile_lake.purged_at"
RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"
VACUUM_LOGGING = "spark.databricks.delta.vacuum.logging.enabled"
GRAPH_CHECKPOINTS = Path("checkpoints") / "identity_graph"
# the lake's schemas: dbt's target schema and its layers (dbt_project.yml, the ingest, the
# run history and locks)
LAKE_LAYERS = ("", "_landing", "_staging", "_intermediate", "_control")
# the run locks' table is written while the purge holds its locks (their leases are renewed),
# and holds run ids and lock keys only: a purge of it would race with its own locks
LEFT_UNPURGED = ("run_locks",)


@dataclass(frozen=True)
class TablePurge:
    table: str
    data_version: int
    log_start: int
    log_files_deleted: int
    unrecognised: tuple[str, ...] = ()
    seconds: float = 0.0

    def describe(self) -> str:
        kept = ", ".join(self.unrecognised)
        kept = f"; kept unknown log files {kept}" if kept else ""
        return (
            f"purge: {self.table}: history before version {self.log_start} removed "
            f"({self.log_files_deleted} log files) in {self.seconds:.1f}s{kept}"
        )


PURGE_EVENTS_COLUMNS = "purged_at timestamp not null, tables int not null, seconds double not null"


def purge_events_table(control_schema: str) -> str:
    return f"{control_schema}.purge_events"


def ensure_purge_events(spark: SparkSession, control_schema: str) -> str:
    """The table of completed purges (erasure_requests reads when each request was purged)."""
    table = purge_events_table(control_schema)
    if not spark.catalog.tableExists(table):
        spark.sql(f"create schema if not exists {control_schema}")
        spark.sql(f"create table if not exists {table} ({PURGE_EVENTS_COLUMNS}) using delta")
    return table


def record_purge(spark: SparkSession, control_schema: str, tables: int, seconds: float) -> None:
    """Append the purge that just completed, after every table was rewritten: a purge killed
    before that is not one (its requests stay unpurged, and the next purge redoes it all)."""
    table = ensure_purge_events(spark, control_schema)
    spark.sql(f"insert into {table} values (current_timestamp(), {int(tables)}, {float(seconds)})")


def lake_schemas(spark: SparkSession, schema: str) -> list[str]:
    """The schemas of the lake of dbt schema `schema` that exist: itself and its layers."""
    names = {str(row[0]).lower() for row in spark.sql("show schemas").collect()}
    return [
        f"{schema}{layer}".lower() for layer in LAKE_LAYERS if f"{schema}{layer}".lower() in names
    ]


def delta_tables(spark: SparkSession, schemas: list[str]) -> list[tuple[str, Path]]:
    """The Delta tables of `schemas`, with their folders (views hold no data). A table whose
    folder is not on this machine (a cluster target's storage) stops the purge: it deletes log
    files through the local file system."""
    found: list[tuple[str, Path]] = []
    elsewhere: list[str] = []
    for schema in schemas:
        views = {row["viewName"].lower() for row in spark.sql(f"show views in {schema}").collect()}
        for listed in spark.sql(f"show tables in {schema}").collect():
            name = str(listed["tableName"]).lower()
            if listed["isTemporary"] or name in views or name in LEFT_UNPURGED:
                continue
            table = f"{schema}.{name}"
            path = local_table_path(spark, table)
            if path is None:
                elsewhere.append(table)
            else:
                found.append((table, path))
    if elsewhere:
        raise RuntimeError(
            f"purge: {len(elsewhere)} tables are not in a warehouse on this machine "
            f"({', '.join(elsewhere[:3])}...): the purge deletes log files through the local "
            "file system. Run it where the warehouse is mounted (docs/erasure.md)."
        )
    return found


@contextmanager
def vacuum_settings(spark: SparkSession) -> Iterator[None]:
    """VACUUM refuses a retention under 7 days unless Delta's retention check is off: the purge
    holds every lock, so no reader can still need the files it deletes. VACUUM lists a table's
    folders with one task per folder up to Spark's listing parallelism (10,000 by default): 20 s
    for a table of ten files on 2 cores, 1.3 s with one task per core. And VACUUM's own
    START and END commits are left out: they record a count the purge does not need (an extra
    Spark job) in two commits whose history the purge deletes anyway, about a sixth of its
    time."""
    wanted = {
        RETENTION_CHECK: "false",
        VACUUM_LOGGING: "false",
        LISTING_PARALLELISM: str(spark.sparkContext.defaultParallelism),
    }
    saved = {key: spark.conf.get(key, None) for key in wanted}
    for key, value in wanted.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


@contextmanager
def jvm_console_silenced(spark: SparkSession) -> Iterator[None]:
    """Delta's VACUUM prints a line to the JVM's console per table ("Deleted N files and
    directories..."), past the run's logging. Scala's console stream is swapped for a null
    one on this thread meanwhile (through reflection: Scala 2.13 has no public setter); if
    that is not possible, the lines are printed."""
    jvm = spark.sparkContext._jvm  # type: ignore[attr-defined]
    try:
        console = jvm.java.lang.Class.forName("scala.Console$")
        field = console.getDeclaredField("outVar")
        field.setAccessible(True)
        out = field.get(console.getField("MODULE$").get(None))
        saved = out.value()
        getattr(out, "value_$eq")(
            jvm.java.io.PrintStream(jvm.java.io.OutputStream.nullOutputStream())
        )
    except Exception:  # another Scala: the lines are printed
        yield
        return
    try:
        yield
    finally:
        getattr(out, "value_$eq")(saved)


def checkpoint_latest(spark: SparkSession, path: Path) -> int:
    """Write a checkpoint of the table's latest version; returns that version."""
    jvm = spark.sparkContext._jvm  # type: ignore[attr-defined]
    log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, str(path))  # type: ignore[attr-defined]
    version = delta_log.latest_version(path)
    log.update(False, jvm.scala.Option.empty(), jvm.scala.Option.empty())
    log.checkpoint()
    names = [entry.name for entry in (path / "_delta_log").iterdir()]
    if version is None or not has_complete_checkpoint(names, version):
        raise RuntimeError(f"no checkpoint of version {version} was written in {path}/_delta_log")
    return version


def truncate_log(path: Path, log_start: int) -> tuple[int, tuple[str, ...]]:
    """Delete every file of `path`'s log before the checkpoint of `log_start`; returns how
    many, and the files it kept without knowing them."""
    log = path / "_delta_log"
    names = [
        str(file.relative_to(log)).replace(os.sep, "/") for file in log.rglob("*") if file.is_file()
    ]
    if any(name.startswith("_sidecars/") for name in names):
        raise RuntimeError(
            f"{path} has v2 checkpoints with sidecar files, which the purge does not read: "
            "purge it by hand (docs/erasure.md)"
        )
    plan = log_files_to_purge(names, log_start, ())
    for name in plan.deleted:
        (log / name).unlink(missing_ok=True)
    return len(plan.deleted), plan.unrecognised


def write_marker(path: Path, marker: PurgeMarker) -> None:
    handle, temporary = tempfile.mkstemp(dir=path, prefix=".", suffix=".tmp")
    with os.fdopen(handle, "w") as out:
        out.write(marker.to_json())
    os.replace(temporary, path / PURGE_MARKER_FILE)


def purge_table(spark: SparkSession, table: str, path: Path, now: datetime) -> TablePurge:
    started = time.monotonic()
    data_version = delta_log.latest_version(path)
    if data_version is None:
        raise RuntimeError(f"{table} has no Delta log in {path}")
    # the purge changes no row: a mart's stamps in force before it hold after it, at the
    # purge's commit (the stamped commit's log file goes)
    stamps = mart_stamps(spark, table)
    properties = table_properties(spark, table)
    if properties.get("delta.enableDeletionVectors", "false").lower() == "true":
        spark.sql(f"reorg table {table} apply (purge)")
    with jvm_console_silenced(spark):
        spark.sql(f"vacuum {table} retain 0 hours")
    spark.sql(
        f"alter table {table} set tblproperties "
        f"('{PURGED_AT_PROPERTY}' = '{now.isoformat(timespec='seconds')}')"
    )
    log_start = checkpoint_latest(spark, path)
    deleted, unrecognised = truncate_log(path, log_start)
    write_marker(path, PurgeMarker(log_start, data_version))
    record_stamps(spark, table, stamps, {}, {})
    return TablePurge(
        table, data_version, log_start, deleted, unrecognised, time.monotonic() - started
    )


def remove_graph_checkpoints(lake_home: Path, schema: str) -> int:
    """Remove the identity graph's round checkpoints of the lake (each run keeps its last
    folder until the next run); returns how many folders went."""
    root = lake_home / GRAPH_CHECKPOINTS / schema
    if not root.is_dir():
        return 0
    folders = [folder for scope in root.iterdir() if scope.is_dir() for folder in scope.iterdir()]
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    return len(folders)


def purge_lake(
    spark: SparkSession,
    schema: str,
    lake_home: Path,
    progress: Callable[[str], None] = print,
    detail: Callable[[str], None] = lambda _: None,
) -> list[TablePurge]:
    """Purge every Delta table of the lake of dbt schema `schema`, and the graph's checkpoints;
    says what it did in a line or two (`progress`), table by table in `detail`. The caller
    holds every lock."""
    started = time.monotonic()
    now = datetime.now(UTC)
    tables = delta_tables(spark, lake_schemas(spark, schema))
    done: list[TablePurge] = []
    with vacuum_settings(spark):
        for table, path in tables:
            purged = purge_table(spark, table, path, now)
            detail(purged.describe())
            done.append(purged)
    folders = remove_graph_checkpoints(lake_home, schema)
    record_purge(spark, f"{schema}_control", len(done), time.monotonic() - started)
    unknown = sorted({name for purged in done for name in purged.unrecognised})
    progress(
        f"purge: {len(done)} tables of {schema} rewritten and their history before the purge "
        f"removed ({sum(p.log_files_deleted for p in done)} log files), "
        f"{folders} identity-graph checkpoint folders removed, "
        f"in {time.monotonic() - started:.0f}s"
        + (f"; unknown log files kept: {', '.join(unknown)}" if unknown else "")
    )
    return done
