"""What an incremental mart reads of a source (profile_lake.mart_feeds): the feed since the
version it consumed, nothing when nothing changed, everything when the feed cannot tell."""

from __future__ import annotations

from datetime import datetime, timedelta

from profile_lake.change_feed import Commit
from profile_lake.erasure.log_purge import PurgeMarker
from profile_lake.mart_feeds import (
    FeedRead,
    StampFile,
    changes_view_name,
    consumed_property,
    consumed_version,
    plan_feed_read,
    record_consumed_sql,
    stamp_file_text,
    stamp_property,
    stamps_in_force,
    stamps_to_record,
)

NOW = datetime(2026, 11, 27, 12, 0)
OLDEST_READABLE = NOW - timedelta(days=7)


def commit(version: int, operation: str = "MERGE", age_days: float = 0) -> Commit:
    return Commit(version, operation, NOW - timedelta(days=age_days))


HISTORY = [commit(3), commit(4, "OPTIMIZE"), commit(5), commit(6)]


def plan(
    consumed: int | None,
    latest: int = 6,
    history=HISTORY,
    feed: bool = True,
    purge: PurgeMarker | None = None,
) -> FeedRead:
    return plan_feed_read(consumed, latest, history, OLDEST_READABLE, feed, purge)


def test_the_feed_is_read_from_the_first_change_after_the_consumed_version() -> None:
    assert plan(2) == FeedRead("since", 6, 3)
    # maintenance after the consumed version is passed over
    assert plan(3) == FeedRead("since", 6, 5)


def test_nothing_is_read_when_nothing_or_only_maintenance_followed() -> None:
    assert plan(6) == FeedRead("none", 6)
    assert plan(3, latest=4, history=HISTORY[:2]) == FeedRead("none", 4)


def test_everything_is_recomputed_when_the_feed_cannot_tell() -> None:
    # never stamped (built before, or by a full build)
    assert plan(None).kind == "all"
    # the source was created anew: its versions start again
    assert plan(9).kind == "all"
    # the feed is off
    assert plan(2, feed=False).kind == "all"
    # replaced or restored since the consumed version
    for operation in ("CREATE OR REPLACE TABLE AS SELECT", "RESTORE"):
        assert plan(2, history=[*HISTORY, commit(7, operation)], latest=7).kind == "all"
    # the first change to read is older than Delta's retention
    assert plan(2, history=[commit(3, age_days=30), *HISTORY[1:]]).kind == "all"
    # versions after the consumed one are gone from the history
    assert plan(0).kind == "all"


# A source purged after an erasure: its last change before the purge is version 9, the
# purge's REORG and VACUUM are 10 to 12, and its log now starts at 12. Two runs follow.
PURGED = PurgeMarker(log_start=12, data_version=9)
AFTER_PURGE = [commit(12, "VACUUM END"), commit(13, "MERGE"), commit(14, "OPTIMIZE")]


def test_a_mart_that_read_every_change_before_a_purge_reads_on_from_it() -> None:
    for consumed in (9, 10, 11):
        assert plan(consumed, 12, AFTER_PURGE[:1], purge=PURGED) == FeedRead("none", 12)
        assert plan(consumed, 14, AFTER_PURGE, purge=PURGED) == FeedRead("since", 14, 13)
    # without the marker the history it needs is gone, and it would recompute everything
    assert plan(9, 12, AFTER_PURGE[:1]).kind == "all"
    assert plan(9, 14, AFTER_PURGE).kind == "all"


def test_a_mart_behind_the_last_change_before_a_purge_recomputes_everything() -> None:
    assert plan(8, 12, AFTER_PURGE[:1], purge=PURGED) == FeedRead("all", 12)
    assert plan(2, 14, AFTER_PURGE, purge=PURGED) == FeedRead("all", 14)


def test_a_purge_changes_nothing_for_a_mart_that_read_past_it() -> None:
    for consumed, latest in ((12, 14), (13, 14), (14, 14)):
        assert plan(consumed, latest, AFTER_PURGE, purge=PURGED) == plan(
            consumed, latest, AFTER_PURGE
        )
    assert plan(13, 14, AFTER_PURGE, purge=PURGED) == FeedRead("none", 14)
    assert plan(None, 14, AFTER_PURGE, purge=PURGED).kind == "all"


def test_after_a_purge_the_other_reasons_to_recompute_everything_still_hold() -> None:
    assert plan(9, 14, AFTER_PURGE, feed=False, purge=PURGED).kind == "all"
    restored = [*AFTER_PURGE, commit(15, "RESTORE")]
    assert plan(9, 15, restored, purge=PURGED).kind == "all"
    stale = [commit(12, "VACUUM END"), commit(13, "MERGE", age_days=30)]
    assert plan(9, 13, stale, purge=PURGED).kind == "all"
    # a marker that starts past the latest version is not this log's
    assert plan(9, 11, [commit(10, "MERGE"), commit(11, "MERGE")], purge=PURGED).kind == "all"


def test_consumed_versions_are_table_properties_by_full_source_name() -> None:
    properties = {consumed_property("db_intermediate.int_graph"): "12"}
    assert consumed_property("db.`Profiles`") == "profile_lake.consumed.db.profiles"
    assert consumed_property("spark_catalog.db.profiles") == "profile_lake.consumed.db.profiles"
    assert consumed_version(properties, "DB_intermediate.`int_graph`") == 12
    # a table of the same name in another schema is another source
    assert consumed_version(properties, "db_landing.int_graph") is None
    assert consumed_version(properties, "int_graph") is None
    assert consumed_version({consumed_property("t"): "x"}, "t") is None


def test_the_stamps_recorded_are_only_what_moved() -> None:
    properties = {consumed_property("db.a"): "4", stamp_property("digest"): "abc"}
    reads = {"db.a": FeedRead("since", 7, 5), "db.b": FeedRead("none", 3)}
    moved = stamps_to_record(properties, reads, {stamp_property("digest"): "abc"})
    assert moved == {"profile_lake.consumed.db.a": "7"}
    assert record_consumed_sql("db.m", moved) == (
        "alter table db.m set tblproperties ('profile_lake.consumed.db.a' = '7')"
    )
    # a run that read nothing new and kept its stamps records nothing
    assert stamps_to_record(properties, {"db.a": FeedRead("none", 4)}) == {}
    assert record_consumed_sql("db.m", {}) == ""
    assert stamps_to_record(properties, {}, {stamp_property("digest"): "def"}) == {
        "profile_lake.stamp.digest": "def"
    }


def test_a_stamp_file_holds_while_only_maintenance_follows_itscommit() -> None:
    stamp = StampFile.parse(stamp_file_text("7@123", {consumed_property("db.a"): "9"}))
    assert stamp is not None and stamp.version == 7
    assert stamp.holds("7@123", [])
    assert stamp.holds("7@123", [commit(7, "MERGE"), commit(8, "OPTIMIZE")])
    # a write after it (a run stopped between its MERGE and its stamp), or a table created
    # anew whose version 7 is another commit, sets it aside
    assert not stamp.holds("7@123", [commit(8, "OPTIMIZE"), commit(9, "MERGE")])
    assert not stamp.holds("7@456", [])
    assert not stamp.holds(None, [])


def test_stamps_in_force_are_the_files_where_it_holds_else_the_properties() -> None:
    properties = {consumed_property("db.a"): "4", "delta.enableChangeDataFeed": "true"}
    stamp = StampFile.parse(stamp_file_text("7@1", {consumed_property("db.a"): "9"}))
    assert consumed_version(stamps_in_force(properties, stamp, True), "db.a") == 9
    assert consumed_version(stamps_in_force(properties, stamp, False), "db.a") == 4
    assert stamps_in_force(properties, None, True) == properties
    for broken in (None, "", "{", '{"commit": "x@1", "stamps": {}}', '{"stamps": {}}', "[]"):
        assert StampFile.parse(broken) is None, broken


def test_each_mart_reads_each_source_through_a_view_of_its_own() -> None:
    first = changes_view_name("lake.profiles", "lake_intermediate.int_graph")
    assert first == "changes__lake__profiles__lake_intermediate__int_graph"
    assert first != changes_view_name("lake.profile_segments", "lake_intermediate.int_graph")
    assert changes_view_name("`a-b`.t", "s") == "changes__a_b__t__s"
