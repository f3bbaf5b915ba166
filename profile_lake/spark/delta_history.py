"""A Delta table's history, properties and change-feed horizon, as the incremental models and
the checks read them: the one reader of them.

A managed table of a warehouse on this machine is read from its `_delta_log` folder
(profile_lake.delta_log): a few files, no Spark statement, no job. Any other table (a cluster
target's warehouse on remote storage, a table elsewhere) is read with DESCRIBE HISTORY and SHOW
TBLPROPERTIES. Commit times are UTC-aware (from epoch milliseconds), so they compare with each
other and with `now` whatever the session's time zone."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from profile_lake import delta_log
from profile_lake.change_feed import Commit, oldest_readable_commit

WAREHOUSE_DIR = "spark.sql.warehouse.dir"


def local_table_path(spark: SparkSession, table: str) -> Path | None:
    """Where `table`'s files are when it is a managed Delta table of a warehouse on this
    machine; None otherwise (then Spark reads its history and properties)."""
    named = delta_log.split_table_name(str(table))  # dbt passes relations too
    warehouse = delta_log.local_warehouse(spark.conf.get(WAREHOUSE_DIR))
    if named is None or warehouse is None:
        return None
    path = delta_log.managed_table_path(warehouse, *named)
    return path if (path / "_delta_log").is_dir() else None


def table_properties(spark: SparkSession, table: str) -> dict[str, str]:
    path = local_table_path(spark, table)
    if path is not None:
        found = delta_log.table_properties(path)
        if found is not None:
            return found
    rows = spark.sql(f"show tblproperties {table}").collect()
    return {row["key"]: row["value"] for row in rows}


def change_feed_enabled(properties: dict[str, str]) -> bool:
    return properties.get("delta.enableChangeDataFeed", "false").lower() == "true"


def latest_version(spark: SparkSession, table: str) -> int:
    path = local_table_path(spark, table)
    version = delta_log.latest_version(path) if path is not None else None
    if version is not None:
        return version
    return int(spark.sql(f"describe history {table} limit 1").first()["version"])


def commit_history(spark: SparkSession, table: str, limit: int | None = None) -> list[Commit]:
    """The table's commits, newest first: all of them, or the newest `limit`."""
    path = local_table_path(spark, table)
    if path is not None:
        return delta_log.commit_history(path, limit)
    statement = f"describe history {table}" + (f" limit {max(limit, 1)}" if limit else "")
    rows = (
        spark.sql(statement)
        .selectExpr("version", "operation", "unix_millis(timestamp) as timestamp_ms")
        .collect()
    )
    return [
        Commit(
            int(row["version"]),
            str(row["operation"]),
            datetime.fromtimestamp(row["timestamp_ms"] / 1000, UTC),
        )
        for row in rows
    ]


def oldest_readable_commit_time(
    spark: SparkSession, table: str, properties: dict[str, str] | None = None
) -> datetime:
    """The oldest commit time a change-feed read of `table` may start at, from now (UTC)."""
    known = properties if properties is not None else table_properties(spark, table)
    return oldest_readable_commit(
        datetime.now(UTC), known.get("delta.deletedFileRetentionDuration")
    )


def read_change_feed(spark: SparkSession, table: str, start: int, end: int) -> DataFrame:
    """`table`'s change feed for versions `start` to `end`: its rows with Delta's `_change_type`,
    `_commit_version` and `_commit_timestamp`. Through the DataFrame reader: this Spark resolves
    the SQL `table_changes` function to the table itself, without the feed, when the statement
    also reads the table."""
    return (
        spark.read.format("delta")
        .option("readChangeFeed", "true")
        .option("startingVersion", start)
        .option("endingVersion", end)
        .table(table)
    )
