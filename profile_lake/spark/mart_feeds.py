"""Spark plumbing of profile_lake.mart_feeds: a mart's consumed versions, a source's history."""

from __future__ import annotations

from pyspark.sql import SparkSession

from profile_lake.mart_feeds import (
    FeedRead,
    consumed_version,
    plan_feed_read,
    read_without_history,
)
from profile_lake.spark.delta_history import (
    change_feed_enabled,
    commit_history,
    latest_version,
    oldest_readable_commit_time,
    read_change_feed,
    table_properties,
)


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
    return plan_feed_read(
        consumed,
        latest,
        commit_history(spark, source, latest - consumed),
        oldest_readable_commit_time(spark, source, properties),
        change_feed_enabled(properties),
    )


def register_changes_view(spark: SparkSession, source: str, read: FeedRead, view: str) -> None:
    """The session's temporary view `view` of `source`'s change feed for `read` (a `since`
    read), with Delta's feed columns."""
    read_change_feed(spark, source, read.start, read.end).createOrReplaceTempView(view)
