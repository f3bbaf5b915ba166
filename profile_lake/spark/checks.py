"""Spark plumbing of profile_lake.checks: a table's Delta history, its newest batch per tenant
as of the version before the run, and a session view of the run's changes from its feed."""

from __future__ import annotations

from datetime import datetime

from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from profile_lake.change_feed import Commit
from profile_lake.checks import (
    EVERY_ROW,
    ChangesThisRun,
    Marker,
    RowsThisRun,
    RunRows,
    Scope,
    changes_view_name,
    history_reaches_back,
    scope_from_history,
    whole_table_rows,
    written_rows_sql,
)
from profile_lake.spark.delta_history import (
    change_feed_enabled,
    commit_history,
    read_change_feed,
    table_properties,
)
from profile_lake.sql import sql_string

# Delta's change feed: its metadata columns, and the change types that leave a row in the table
FEED_COLUMNS = ("_change_type", "_commit_version", "_commit_timestamp")
WRITTEN_CHANGE_TYPES = ("insert", "update_postimage")

# A run commits a few times to a table; the newest entries of its history hold them.
RECENT_COMMITS = 20


def commits_since(spark: SparkSession, relation: str, since: datetime) -> list[Commit]:
    """The commits of a Delta table at or after `since`: its newest history entries, or its
    whole history when even the oldest of those is that recent."""
    commits = commit_history(spark, relation, RECENT_COMMITS)
    if not history_reaches_back([commit.timestamp for commit in commits], RECENT_COMMITS, since):
        commits = commit_history(spark, relation)
    return [commit for commit in commits if commit.timestamp >= since]


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


def rows_written(
    spark: SparkSession, relation: str, marker: Marker, run_started_at: datetime
) -> RunRows:
    """The rows of `relation` the run that started at `run_started_at` wrote."""
    scope = scope_from_history(commits_since(spark, relation, run_started_at), run_started_at)
    if isinstance(marker, ChangesThisRun):
        return changed_rows(spark, relation, scope)
    if scope.kind != "since" or scope.before_version is None:
        return RunRows(relation, written_rows_sql(marker, scope, {}))
    watermarks = watermarks_before(spark, relation, marker, scope.before_version)
    return RunRows(relation, written_rows_sql(marker, scope, watermarks))


def changed_rows(spark: SparkSession, relation: str, scope: Scope) -> RunRows:
    """The rows a `since` scope's versions inserted or updated, as a cached session view of the
    table's change feed; the whole table when its feed is off or cannot be read."""
    if scope.kind != "since" or scope.before_version is None or scope.last_version is None:
        return whole_table_rows(relation, scope)
    if not change_feed_enabled(table_properties(spark, relation)):
        return whole_table_rows(relation, Scope("all"), "its change feed is off")
    view = changes_view_name(relation)
    # dropping a cached view uncaches it: an earlier run's rows go
    spark.catalog.dropTempView(view)
    change_types = ", ".join(sql_string(change_type) for change_type in WRITTEN_CHANGE_TYPES)
    try:
        (
            read_change_feed(spark, relation, scope.before_version + 1, scope.last_version)
            .where(f"_change_type in ({change_types})")
            .drop(*FEED_COLUMNS)
            .createOrReplaceTempView(view)
        )
        # read once for the table's tests, here: a range the feed does not cover fails now
        spark.catalog.cacheTable(view)
        spark.table(view).count()
    except AnalysisException as error:
        spark.catalog.dropTempView(view)
        reason = f"its change feed could not be read ({str(error).splitlines()[0]})"
        return whole_table_rows(relation, Scope("all"), reason)
    return RunRows(view, EVERY_ROW)
