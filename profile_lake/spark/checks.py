"""Spark plumbing of profile_lake.checks: a table's Delta history, and its newest batch per
tenant as of the version before the run."""

from __future__ import annotations

from datetime import UTC, datetime

from pyspark.sql import SparkSession

from profile_lake.checks import (
    Commit,
    RowsThisRun,
    history_reaches_back,
    scope_from_history,
    written_rows_sql,
)

# A run commits a few times to a table; the newest entries of its history hold them.
RECENT_COMMITS = 20


def commits_since(spark: SparkSession, relation: str, since: datetime) -> list[Commit]:
    """The commits of a Delta table at or after `since`: its newest history entries, or its
    whole history when even the oldest of those is that recent."""
    commits = _history(spark, f"describe history {relation} limit {RECENT_COMMITS}")
    if not history_reaches_back([commit.timestamp for commit in commits], RECENT_COMMITS, since):
        commits = _history(spark, f"describe history {relation}")
    return [commit for commit in commits if commit.timestamp >= since]


def _history(spark: SparkSession, statement: str) -> list[Commit]:
    rows = (
        spark.sql(statement)
        .selectExpr("version", "unix_millis(timestamp) as timestamp_ms", "operation")
        .collect()
    )
    return [
        Commit(
            int(row["version"]),
            datetime.fromtimestamp(row["timestamp_ms"] / 1000, UTC),
            str(row["operation"]),
        )
        for row in rows
    ]


def watermarks_before(
    spark: SparkSession, relation: str, marker: RowsThisRun, version: int
) -> dict[str, int]:
    """The newest batch of each tenant ('' for no tenant) in the table's `version`."""
    rows = spark.sql(
        f"select coalesce(cast({marker.tenant_column} as string), '') as tenant, "
        f"max({marker.column}) as watermark "
        f"from {relation} version as of {version} group by 1"
    ).collect()
    return {row["tenant"]: int(row["watermark"]) for row in rows if row["watermark"] is not None}


def written_rows_predicate(
    spark: SparkSession, relation: str, marker: RowsThisRun, run_started_at: datetime
) -> str:
    """The predicate of the rows of `relation` the run that started at `run_started_at` wrote."""
    scope = scope_from_history(commits_since(spark, relation, run_started_at), run_started_at)
    if scope.kind != "since" or scope.before_version is None:
        return written_rows_sql(marker, scope, {})
    watermarks = watermarks_before(spark, relation, marker, scope.before_version)
    return written_rows_sql(marker, scope, watermarks)
