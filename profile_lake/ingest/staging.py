"""Exactly-once ingestion of landing files into append-only Delta staging tables.

One Structured Streaming query (file source, available-now trigger) reads every landing file not
yet ingested. Its checkpoint is the write-ahead log of which files make up each micro-batch, and
each batch is appended to the per-stream staging tables with Delta's idempotent-write options
(`txnAppId`, `txnVersion` = batch id): a batch replayed after a killed run is skipped by the
tables that already committed it, so every file lands exactly once.
"""

from __future__ import annotations

import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from profile_lake.ingest.lines import STREAMS, UNREADABLE_TENANT, landed_lines, stream_of
from profile_lake.spark.delta_history import table_properties
from profile_lake.spark.erasure import draw_erasure_salts, ensure_salts_table

BUCKET_SECONDS = 15 * 60
INGEST_ID_PROPERTY = "profile_lake.ingest_id"
# Spark builds each micro-batch's file index (and, when the query restarts, the last batch's
# again) by listing its file paths with one task per path, up to 10,000 tasks: a batch of 5,000
# small files cost 20 s of task scheduling on 2 cores. One listing task per core does the same.
LISTING_PARALLELISM = "spark.sql.sources.parallelPartitionDiscovery.parallelism"

BINARY_FILE_SCHEMA = StructType(
    [
        StructField("path", StringType()),
        StructField("modificationTime", TimestampType()),
        StructField("length", LongType()),
        StructField("content", BinaryType()),
    ]
)
LINES_SCHEMA = StructType(
    [
        StructField("stream", StringType()),
        StructField("source_file", StringType()),
        StructField("line_number", LongType()),
        StructField("is_valid_utf8", BooleanType()),
        StructField("line_bytes", LongType()),
        StructField("line", StringType()),
    ]
)
STAGING_DDL_COLUMNS = """
    ingest_batch_id bigint comment 'Micro-batch of the ingest that staged the line.',
    source_file string comment 'Landing file, relative to the landing folder.',
    line_number bigint comment '1-based line number in the file (0: the file was unreadable).',
    tenant_id string comment 'tenant_id read from the line, or ~unreadable.',
    ingest_bucket timestamp comment '15-minute bucket of ingested_at (partition).',
    ingested_at timestamp comment 'When the line was staged (UTC).',
    is_valid_utf8 boolean comment 'False when the line is not UTF-8 (kept with \\\\xNN escapes).',
    line_bytes bigint comment 'Size of the line in bytes, without its newline.',
    line string comment 'The line as landed (null once an erasure removed it).',
    is_erased boolean comment 'True once an erasure removed the line (SPEC.md section 7).'
"""
# Statistics only on the small columns that reads filter on; never on the raw line. Not
# append-only: an erasure rewrites the lines naming the person (SPEC.md section 7), and the
# `erasures` stream's text is cleared once staged.
STAGING_PROPERTIES = {
    "delta.dataSkippingStatsColumns": "ingest_batch_id,source_file,line_number,ingested_at",
    "delta.autoOptimize.optimizeWrite": "true",
    "delta.autoOptimize.autoCompact": "true",
}
# The landing tables' layout: a table of an older layout is brought to it once (is_erased
# added, delta.appendOnly lifted) by the ingest that finds it
LANDING_LAYOUT_PROPERTY = "profile_lake.landing_layout"
LANDING_LAYOUT = "2"


@dataclass
class BatchReport:
    batch_id: int
    files: int
    lines_by_stream: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def describe(self) -> str:
        per_stream = ", ".join(f"{s} {n}" for s, n in sorted(self.lines_by_stream.items()))
        total = sum(self.lines_by_stream.values())
        return (
            f"ingest batch {self.batch_id}: {self.files} files, {total} lines "
            f"({per_stream or 'none'}) in {self.seconds:.1f}s"
        )


@dataclass(frozen=True)
class IngestSettings:
    landing_path: str
    schema: str
    checkpoint_dir: str
    # dbt's var tenant_id_pattern: a line whose tenant_id does not match it is staged under
    # UNREADABLE_TENANT
    tenant_id_pattern: str
    max_files_per_batch: int = 200
    # `<schema>_control`, where the erasure salts live (profile_lake.spark.erasure); None: the
    # ingest draws no salt (benchmarks and tests of the ingest alone)
    control_schema: str | None = None


def staging_table(schema: str, stream: str) -> str:
    return f"{schema}.{stream}"


def _relative_to(root: str, path: str) -> str:
    path = path.removeprefix("file://").removeprefix("file:")
    root = root.removeprefix("file://").removeprefix("file:").rstrip("/") + "/"
    return path.removeprefix(root)


def _explode_files(landing_root: str) -> Callable[[Iterator[pa.RecordBatch]], Iterator]:
    def explode(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            paths = batch.column("path").to_pylist()
            contents = batch.column("content")
            for index, path in enumerate(paths):
                lines = list(landed_lines(path, contents[index].as_py()))
                yield pa.RecordBatch.from_pydict(
                    {
                        "stream": [stream_of(path)] * len(lines),
                        "source_file": [_relative_to(landing_root, path)] * len(lines),
                        "line_number": [item.line_number for item in lines],
                        "is_valid_utf8": [item.is_valid_utf8 for item in lines],
                        "line_bytes": [item.line_bytes for item in lines],
                        "line": [item.line for item in lines],
                    },
                    schema=pa.schema(
                        [
                            ("stream", pa.string()),
                            ("source_file", pa.string()),
                            ("line_number", pa.int64()),
                            ("is_valid_utf8", pa.bool_()),
                            ("line_bytes", pa.int64()),
                            ("line", pa.string()),
                        ]
                    ),
                )

    return explode


def stage_lines(
    files: DataFrame,
    landing_root: str,
    batch_id: int,
    ingested_at: datetime,
    tenant_id_pattern: str,
):
    """The staged rows of one batch of landed files (a static DataFrame)."""
    tenant = F.get_json_object("line", "$.tenant_id")
    return (
        files.select("path", "content")
        .mapInArrow(_explode_files(landing_root), LINES_SCHEMA)
        .select(
            "stream",
            F.lit(batch_id).cast("bigint").alias("ingest_batch_id"),
            "source_file",
            "line_number",
            F.when(tenant.rlike(tenant_id_pattern), tenant)
            .otherwise(F.lit(UNREADABLE_TENANT))
            .alias("tenant_id"),
            F.timestamp_seconds(
                F.floor(F.unix_timestamp(F.lit(ingested_at)) / BUCKET_SECONDS) * BUCKET_SECONDS
            ).alias("ingest_bucket"),
            F.lit(ingested_at).cast("timestamp").alias("ingested_at"),
            "is_valid_utf8",
            "line_bytes",
            "line",
        )
    )


def distinct_files(files: DataFrame) -> DataFrame:
    """The files of a micro-batch, each once.

    Spark's file stream source re-resolves a batch's file paths with globbing off, and then a
    path that looks like a glob (one with `{`, `}`, `[`, `]`, `*`, `?` or a backslash) stands for
    every path of the batch (DataSource.checkAndGlobPathIfNecessary returns all of them): one
    such file name makes every other file of its batch come twice. Checking the paths is a
    listing-only job (the content column is not read; the batch DataFrame's inputFiles() is
    empty); only a batch with repeats pays a shuffle.
    """
    paths = [row["path"] for row in files.select("path").collect()]
    if len(paths) == len(set(paths)):
        return files
    return files.dropDuplicates(["path"])


def _ingest_id(checkpoint_dir: Path) -> str:
    """An id of this checkpoint, stored in it: Delta's idempotent-write app id. A new checkpoint
    (after a full refresh) gets a new id, so its batch numbers never collide with the old ones."""
    id_file = checkpoint_dir / "ingest_id"
    if not id_file.exists():
        checkpoint_dir.mkdir(parents=True, exist_ok=True)
        id_file.write_text(uuid.uuid4().hex)
    return id_file.read_text().strip()


def ensure_staging_tables(spark: SparkSession, schema: str, ingest_id: str) -> None:
    """Create the missing landing tables; stop when one was filled by another checkpoint.
    Tables that exist cost no statement (their properties come from the Delta log)."""
    for stream in STREAMS:
        table = staging_table(schema, stream)
        properties = {
            **STAGING_PROPERTIES,
            LANDING_LAYOUT_PROPERTY: LANDING_LAYOUT,
            INGEST_ID_PROPERTY: ingest_id,
        }
        rendered = ", ".join(f"'{key}' = '{value}'" for key, value in properties.items())
        if not spark.catalog.tableExists(table):
            spark.sql(f"create schema if not exists {schema}")
            spark.sql(
                f"create table if not exists {table} ({STAGING_DDL_COLUMNS}) using delta "
                f"partitioned by (tenant_id, ingest_bucket) tblproperties ({rendered})"
            )
        found = table_properties(spark, table)
        owner = found.get(INGEST_ID_PROPERTY)
        if owner != ingest_id:
            raise RuntimeError(
                f"Staging table {table} was filled by another ingest checkpoint than the one in "
                f"use; re-ingesting would duplicate lines. Run `dbt build --full-refresh` to "
                f"rebuild staging from the landing files."
            )
        if found.get(LANDING_LAYOUT_PROPERTY) != LANDING_LAYOUT:
            upgrade_landing_table(spark, table)


def upgrade_landing_table(spark: SparkSession, table: str) -> None:
    """Bring a landing table of an older layout to this one: erasures rewrite its lines."""
    if "is_erased" not in spark.table(table).columns:
        spark.sql(
            f"alter table {table} add columns (is_erased boolean comment "
            f"'True once an erasure removed the line (SPEC.md section 7).')"
        )
    spark.sql(
        f"alter table {table} set tblproperties ('delta.appendOnly' = 'false', "
        f"'{LANDING_LAYOUT_PROPERTY}' = '{LANDING_LAYOUT}')"
    )


def reset(spark: SparkSession, settings: IngestSettings) -> None:
    """Forget everything ingested: drop the staging tables and the checkpoint."""
    for stream in STREAMS:
        spark.sql(f"drop table if exists {staging_table(settings.schema, stream)}")
    shutil.rmtree(settings.checkpoint_dir, ignore_errors=True)


def draw_batch_salts(
    spark: SparkSession,
    staged: DataFrame,
    control_schema: str,
    progress: Callable[[str], None],
) -> None:
    """Salt every tenant of the batch's `erasures` lines before they are appended: the staging
    model hashes them with it, and a batch killed after the draw leaves a salt that the next
    attempt keeps."""
    requests = staged.where(F.col("stream") == "erasures")
    requesting = [row["tenant_id"] for row in requests.select("tenant_id").distinct().collect()]
    salted = draw_erasure_salts(spark, control_schema, requesting)
    if salted:
        progress(f"erasure: drew a salt for tenants {', '.join(salted)}")


def ingest_landing(
    spark: SparkSession,
    settings: IngestSettings,
    progress: Callable[[str], None] = print,
) -> list[BatchReport]:
    """Stage every landing file not yet staged; returns one report per micro-batch."""
    landing_root = str(Path(settings.landing_path).resolve())
    if not Path(landing_root).is_dir():
        raise FileNotFoundError(
            f"Landing folder {landing_root} does not exist (set PROFILE_LAKE_LANDING)."
        )
    checkpoint_dir = Path(settings.checkpoint_dir).resolve()
    ingest_id = _ingest_id(checkpoint_dir)
    ensure_staging_tables(spark, settings.schema, ingest_id)
    if settings.control_schema:
        ensure_salts_table(spark, settings.control_schema)
    reports: list[BatchReport] = []

    def write_batch(files: DataFrame, batch_id: int) -> None:
        started = time.monotonic()
        files = distinct_files(files)
        staged = stage_lines(
            files, landing_root, batch_id, datetime.now(UTC), settings.tenant_id_pattern
        ).persist()
        try:
            summary = staged.groupBy("stream").agg(
                F.count("*").alias("lines"), F.countDistinct("source_file").alias("files")
            )
            rows = summary.collect()
            counts = {row["stream"]: row["lines"] for row in rows}
            if counts.get("erasures") and settings.control_schema:
                draw_batch_salts(spark, staged, settings.control_schema, progress)
            for stream in STREAMS:
                if not counts.get(stream):
                    continue
                (
                    staged.where(F.col("stream") == stream)
                    .drop("stream")
                    .write.format("delta")
                    .mode("append")
                    .option("txnAppId", f"{ingest_id}:{stream}")
                    .option("txnVersion", batch_id)
                    .saveAsTable(staging_table(settings.schema, stream))
                )
        finally:
            staged.unpersist()
        report = BatchReport(
            batch_id,
            sum(row["files"] for row in rows),
            {stream: n for stream, n in counts.items() if stream},
            time.monotonic() - started,
        )
        reports.append(report)
        progress(report.describe())

    stream_glob = "{" + ",".join(STREAMS) + "}"
    files = (
        spark.readStream.format("binaryFile")
        .schema(BINARY_FILE_SCHEMA)
        .option("pathGlobFilter", "{*.jsonl,*.jsonl.gz}")
        .option("maxFilesPerTrigger", settings.max_files_per_batch)
        # Never skip a late file because of its modification time (default: 7 days).
        .option("maxFileAge", "36500d")
        .load(f"{landing_root}/{stream_glob}")
    )
    listing_parallelism = spark.conf.get(LISTING_PARALLELISM)
    spark.conf.set(LISTING_PARALLELISM, str(spark.sparkContext.defaultParallelism))
    try:
        query = (
            files.writeStream.foreachBatch(write_batch)
            .option("checkpointLocation", str(checkpoint_dir / "stream"))
            .trigger(availableNow=True)
            .queryName("profile_lake_landing_ingest")
            .start()
        )
        query.awaitTermination()
    finally:
        spark.conf.set(LISTING_PARALLELISM, listing_parallelism)
    if not reports:
        progress("ingest: no new landing files")
    return reports
