"""Spark plumbing of profile_lake.mart_feeds: a mart's consumed versions, a source's history."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pyspark.sql import SparkSession

from profile_lake.change_feed import Commit, deleted_file_retention
from profile_lake.mart_feeds import (
    FeedRead,
    consumed_version,
    plan_feed_read,
    read_without_history,
)
from profile_lake.spark.identity_graph_increments import latest_version


def table_properties(spark: SparkSession, table: str) -> dict[str, str]:
    rows = spark.sql(f"show tblproperties {table}").collect()
    return {row["key"]: row["value"] for row in rows}


def recent_history(spark: SparkSession, table: str, entries: int) -> list[Commit]:
    """The newest `entries` commits of a Delta table (UTC times)."""
    rows = (
        spark.sql(f"describe history {table} limit {max(entries, 1)}")
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


def plan_source_read(spark: SparkSession, target: str, source: str, incremental: bool) -> FeedRead:
    """What the mart `target` reads of `source` this run (everything when not incremental;
    end -1 when the source does not exist yet: a compile before the first build)."""
    if not spark.catalog.tableExists(source):
        return FeedRead("all", -1)
    latest = latest_version(spark, source)
    if not incremental:
        return FeedRead("all", latest)
    consumed = consumed_version(table_properties(spark, target), source)
    decided = read_without_history(consumed, latest)
    if decided is not None or consumed is None:
        return decided or FeedRead("all", latest)
    properties = table_properties(spark, source)
    retention = deleted_file_retention(properties.get("delta.deletedFileRetentionDuration"))
    # an hour's margin, so that a read does not start at the very edge of the retention
    oldest_readable = datetime.now(UTC) - retention + timedelta(hours=1)
    return plan_feed_read(
        consumed,
        latest,
        recent_history(spark, source, latest - consumed),
        oldest_readable,
        properties.get("delta.enableChangeDataFeed", "false").lower() == "true",
    )


def register_changes_view(spark: SparkSession, source: str, read: FeedRead, view: str) -> None:
    """The session's temporary view `view` of `source`'s change feed for `read` (a `since`
    read): its rows with Delta's `_change_type`, `_commit_version` and `_commit_timestamp`.
    Through the DataFrame reader: this Spark resolves the SQL `table_changes` function to the
    table itself, without the feed."""
    (
        spark.read.format("delta")
        .option("readChangeFeed", "true")
        .option("startingVersion", read.start)
        .option("endingVersion", read.end)
        .table(source)
        .createOrReplaceTempView(view)
    )
