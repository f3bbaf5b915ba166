"""Spark plumbing of profile_lake.mart_feeds: a mart's stamps, a source's history."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from pyspark.sql import SparkSession

from profile_lake import delta_log
from profile_lake.erasure.log_purge import PURGE_MARKER_FILE, PurgeMarker
from profile_lake.mart_feeds import (
    CONSUMED_PROPERTY_PREFIX,
    STAMP_FILE,
    STAMP_PROPERTY_PREFIX,
    FeedRead,
    StampFile,
    consumed_version,
    plan_feed_read,
    read_without_history,
    record_consumed_sql,
    stamp_file_text,
    stamps_in_force,
    stamps_to_record,
)
from profile_lake.spark.delta_history import (
    change_feed_enabled,
    commit_history,
    latest_version,
    local_table_path,
    oldest_readable_commit_time,
    read_change_feed,
    table_properties,
)

STAMP_PREFIXES = (CONSUMED_PROPERTY_PREFIX, STAMP_PROPERTY_PREFIX)


def _stamp_file(folder: os.PathLike[str]) -> str | None:
    try:
        with open(os.path.join(folder, STAMP_FILE)) as handle:
            return handle.read()
    except OSError:
        return None


def mart_stamps(spark: SparkSession, target: str) -> dict[str, str]:
    """The mart `target`'s stamps in force (profile_lake.mart_feeds.stamps_in_force), with its
    other table properties."""
    properties = table_properties(spark, target)
    path = local_table_path(spark, target)
    stamp_file = None if path is None else StampFile.parse(_stamp_file(path))
    if path is None or stamp_file is None:
        return properties
    latest = delta_log.latest_version(path)
    later = [] if latest is None else delta_log.commit_history(path, latest - stamp_file.version)
    holds = stamp_file.holds(delta_log.commit_id(path, stamp_file.version), later)
    return stamps_in_force(properties, stamp_file, holds)


def record_stamps(
    spark: SparkSession,
    target: str,
    before: Mapping[str, str],
    reads: Mapping[str, FeedRead],
    stamps: Mapping[str, str],
) -> str:
    """Record on the mart `target`, after its run wrote, the versions its `reads` consumed and
    its `stamps`, over `before` (mart_stamps as the run found them, before its own commits): a
    stamp file of the mart's latest commit in its folder (no statement; returns ''), or where
    the folder is not on this machine the ALTER TABLE to run ('' when nothing moved)."""
    moved = stamps_to_record(before, reads, stamps)
    path = local_table_path(spark, target)
    commit = None if path is None else delta_log.latest_commit(path)
    if path is None or commit is None:
        return record_consumed_sql(target, moved)
    kept = {key: value for key, value in before.items() if key.startswith(STAMP_PREFIXES)}
    wanted = {**kept, **moved}
    existing = StampFile.parse(_stamp_file(path))
    if not wanted or existing == StampFile(commit, wanted):
        return ""  # nothing new, and the file already describes the mart as it is
    # written whole or not at all: a run stopped here leaves the old file, which then no
    # longer describes the mart's latest commit
    handle, temporary = tempfile.mkstemp(dir=path, prefix=".", suffix=".tmp")
    with os.fdopen(handle, "w") as out:
        out.write(stamp_file_text(commit, wanted))
    os.replace(temporary, path / STAMP_FILE)
    return ""


def read_marker(path: Path | None) -> PurgeMarker | None:
    """The purge marker of the table in `path`; None when it was never purged (or is not on
    this machine). An unreadable marker raises: planning without it would read purged
    versions."""
    if path is None:
        return None
    try:
        text = (path / PURGE_MARKER_FILE).read_text()
    except FileNotFoundError:
        return None
    return PurgeMarker.from_json(text)


def plan_source_read(
    spark: SparkSession, target: str, source: str, incremental: bool, stamps: Mapping[str, str]
) -> FeedRead:
    """What the mart `target`, whose stamps are `stamps` (mart_stamps), reads of `source` this
    run (everything when not incremental; end -1 when the source does not exist yet: a compile
    before the first build)."""
    if not spark.catalog.tableExists(source):
        return FeedRead("all", -1)
    latest = latest_version(spark, source)
    if not incremental:
        return FeedRead("all", latest)
    consumed = consumed_version(stamps, source)
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
        read_marker(local_table_path(spark, source)),
    )


def register_changes_view(spark: SparkSession, source: str, read: FeedRead, view: str) -> None:
    """The session's temporary view `view` of `source`'s change feed for `read` (a `since`
    read), with Delta's feed columns."""
    read_change_feed(spark, source, read.start, read.end).createOrReplaceTempView(view)
