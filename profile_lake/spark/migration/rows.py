"""A dataset's rows as the plan reads them (its schema, its typed partition folders, each
row's file and index), judged by the contract, and what the quarantine and the audit keep of
them (one row per problem; counts and key checksums)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from profile_lake.migration.contract import Check, contract_checks, problems_sql
from profile_lake.migration.plan import Plan
from profile_lake.spark.migration.lake import Lake

PARTITION_INFERENCE = "spark.sql.sources.partitionColumnTypeInference.enabled"
PROBLEMS = "_problems"
FILE = "_source_file"
ROW = "_row_index"


@contextmanager
def _partition_values_as_strings(spark: SparkSession) -> Iterator[None]:
    """Read partition folders as strings (the plan types them, not Spark's inference, which
    would read `007` as 7)."""
    before = spark.conf.get(PARTITION_INFERENCE)
    spark.conf.set(PARTITION_INFERENCE, "false")
    try:
        yield
    finally:
        spark.conf.set(PARTITION_INFERENCE, before)


def key_hash(keys: Sequence[str]) -> F.Column:
    return F.xxhash64(*[F.col(f"`{key}`").cast("string") for key in keys])


def read_source(spark: SparkSession, plan: Plan, files: Sequence[str]) -> DataFrame:
    """The rows of `files` in the plan's target schema (a column later files added is null in
    earlier ones), with their file and row index."""
    root = plan.source_root
    # the plan's schema, given: no schema-merging job per batch, a column that later files
    # added is null in earlier ones, partition folders typed as planned
    schema = ", ".join(f"`{n}` {t}" for n, t in (*plan.columns, *plan.partition_columns))
    with _partition_values_as_strings(spark):
        frame = (
            spark.read.schema(schema)
            .option("basePath", root)
            .parquet(*[str(Path(root) / path) for path in files])
        )
        columns = [
            F.col(f"`{name}`").cast(kind).alias(name)
            for name, kind in (*plan.columns, *plan.partition_columns)
        ]
        prefix = "file:" + str(Path(root).resolve()) + "/"
        source_file = F.expr(f"substr(_metadata.file_path, {len(prefix) + 1})")
        return frame.select(
            *columns,
            source_file.alias(FILE),
            F.col("_metadata.row_index").alias(ROW),
        )


def checks_of(plan: Plan) -> list[Check]:
    names = [name for name, _ in (*plan.columns, *plan.partition_columns)]
    return contract_checks(plan.contract, plan.key_columns, names)


def with_problems(frame: DataFrame, checks: Sequence[Check]) -> DataFrame:
    return frame.withColumn(PROBLEMS, F.expr(problems_sql(checks)))


def quarantine_rows(plan: Plan, bad: DataFrame, batch_of_file: F.Column) -> DataFrame:
    """One row per problem of each bad row (ingest_errors' shape)."""
    data_columns = [name for name, _ in (*plan.columns, *plan.partition_columns)]
    return bad.select(
        F.lit(plan.migration_id).alias("migration_id"),
        batch_of_file.cast("bigint").alias("batch"),
        F.col(FILE).alias("source_file"),
        F.col(ROW).alias("row_index"),
        key_hash(plan.key_columns).alias("key_hash"),
        F.explode(PROBLEMS).alias("problem"),
        F.to_json(F.struct(*[F.col(f"`{name}`") for name in data_columns])).alias("row_json"),
        F.current_timestamp().alias("quarantined_at"),
    ).select(
        "migration_id",
        "batch",
        "source_file",
        "row_index",
        "key_hash",
        F.col("problem.error_code").alias("error_code"),
        F.col("problem.error_message").alias("error_message"),
        "row_json",
        F.col("quarantined_at").cast("timestamp"),
    )


def quarantined(
    lake: Lake, migration_id: str, batch: int | None = None
) -> tuple[dict[int, int], int]:
    """Quarantined rows per batch (of one batch, or all), and the sum of their key hashes (each
    row once)."""
    only = "" if batch is None else f" and batch = {int(batch)}"
    rows = lake.spark.sql(
        f"""
        select batch, count(*) as row_count, sum(cast(key_hash as decimal(38, 0))) as checksum
        from (
            select distinct batch, source_file, row_index, key_hash
            from {lake.quarantine}
            where migration_id = '{migration_id}'{only}
        )
        group by batch
        """
    ).collect()
    return (
        {int(row["batch"]): int(row["row_count"]) for row in rows},
        sum(int(row["checksum"] or 0) for row in rows),
    )


def checksum(frame: DataFrame, keys: Sequence[str]) -> tuple[int, int]:
    """(rows, sum of the key hashes): order-independent, so source and table compare."""
    row = frame.select(
        F.count(F.lit(1)).alias("rows"),
        F.sum(key_hash(keys).cast("decimal(38,0)")).alias("checksum"),
    ).first()
    return int(row["rows"]), int(row["checksum"] or 0)


def table_columns(spark: SparkSession, location: str) -> tuple[tuple[str, str], ...]:
    schema = spark.read.format("delta").load(location).schema
    return tuple((field.name, field.dataType.simpleString()) for field in schema)
