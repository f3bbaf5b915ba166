"""Where a change-feed read starts (profile_lake.change_feed): maintenance commits and other
tenants' tagged commits are passed over, and a start older than Delta's deleted-file retention
or before the history is unreadable."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from profile_lake.change_feed import (
    ChangeFeedGap,
    Commit,
    change_feed_readable,
    change_feed_start_version,
    commit_tenants,
    commits_of_history,
    creation_versions,
    deleted_file_retention,
    first_change_after,
)

NOW = datetime(2026, 11, 25, 12, 0)
OLDEST_READABLE = NOW - timedelta(days=7)
MONTH_AGO = NOW - timedelta(days=30)


def commit(version: int, operation: str, age_days: float, tenants: set[str] | None = None):
    return Commit(
        version,
        operation,
        NOW - timedelta(days=age_days),
        None if tenants is None else frozenset(tenants),
    )


QUIET_LAKE = [
    commit(0, "CREATE OR REPLACE TABLE AS SELECT", 40),
    commit(1, "MERGE", 30, {"acme", "globex"}),
    commit(2, "OPTIMIZE", 30),
    commit(3, "VACUUM START", 30),
    commit(4, "VACUUM END", 30),
    commit(5, "MERGE", 0, {"acme"}),
]


def test_maintenance_commits_are_passed_over() -> None:
    assert first_change_after(QUIET_LAKE, 1).version == 5
    assert change_feed_readable(QUIET_LAKE, 1, OLDEST_READABLE)


def test_a_month_old_first_change_is_unreadable() -> None:
    assert first_change_after(QUIET_LAKE, 0).version == 1
    assert not change_feed_readable(QUIET_LAKE, 0, OLDEST_READABLE)


def test_other_tenants_commits_are_passed_over_for_a_tenant() -> None:
    history = [*QUIET_LAKE[:2], commit(2, "MERGE", 20, {"acme"}), commit(3, "MERGE", 0, {"acme"})]
    assert first_change_after(history, 1, "globex") is None
    assert change_feed_readable(history, 1, OLDEST_READABLE, "globex")
    # acme's own month-old change cannot be read any more
    assert not change_feed_readable(history, 1, OLDEST_READABLE, "acme")
    # without a tenant, every commit that changes rows counts
    assert first_change_after(history, 1).version == 2


def test_an_untagged_commit_may_change_every_tenant() -> None:
    history = [commit(0, "CREATE TABLE", 40), commit(1, "WRITE", 20), commit(2, "MERGE", 0)]
    assert first_change_after(history, 0, "globex").version == 1
    assert not change_feed_readable(history, 0, OLDEST_READABLE, "globex")


def test_a_consumer_up_to_date_reads_nothing() -> None:
    assert first_change_after(QUIET_LAKE, 5) is None
    assert change_feed_readable(QUIET_LAKE, 5, OLDEST_READABLE)


def test_a_start_before_the_history_is_unreadable() -> None:
    # versions 0 to 2 are gone from the log (delta.logRetentionDuration)
    assert not change_feed_readable(QUIET_LAKE[3:], 1, MONTH_AGO - timedelta(days=1))
    assert change_feed_readable(QUIET_LAKE[3:], 2, MONTH_AGO - timedelta(days=1))


def test_tags_name_the_tenants_of_their_table_only() -> None:
    tag = json.dumps({"table": "lake.records", "tenants": ["acme", "globex"]})
    assert commit_tenants(tag, "lake.records") == {"acme", "globex"}
    assert commit_tenants(tag, "lake.identity_map") is None
    assert commit_tenants(None, "lake.records") is None
    assert commit_tenants("a note of someone's", "lake.records") is None
    assert commit_tenants(json.dumps({"table": "lake.records"}), "lake.records") is None
    assert commit_tenants(json.dumps({"table": "lake.records", "tenants": []}), "lake.records") == (
        frozenset()
    )


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        (None, timedelta(weeks=1)),
        ("interval 1 week", timedelta(weeks=1)),
        ("interval 60 days", timedelta(days=60)),
        ("INTERVAL 168 HOURS", timedelta(hours=168)),
        ("interval 1 weeks 2 days 30 minutes", timedelta(days=9, minutes=30)),
    ],
)
def test_deleted_file_retention_settings(setting: str | None, expected: timedelta) -> None:
    assert deleted_file_retention(setting) == expected


@pytest.mark.parametrize("setting", ["interval 1 fortnight", "interval", "soon 3 days"])
def test_an_unreadable_retention_setting_is_an_error(setting: str) -> None:
    with pytest.raises(ValueError, match="deletedFileRetentionDuration"):
        deleted_file_retention(setting)


# ---------------------------------------------------------------- change_feed_start_version


def start(history: list[Commit], watermarks: dict[str, int] | None, gaps: tuple = ()) -> int:
    return change_feed_start_version(
        history, watermarks, table="lake.records", consumer="notes", accepted_gaps=gaps
    )


def test_each_tenant_starts_at_its_first_change_after_its_watermark() -> None:
    # acme's next change is 5; globex has none after 1: the read starts at 5
    assert start(QUIET_LAKE, {"acme": 1, "globex": 1}) == 5
    assert start(QUIET_LAKE, {"acme": 0, "globex": 5}) == 1
    # nothing to read: one past the latest version
    assert start(QUIET_LAKE, {"acme": 5, "globex": 5}) == 6
    assert start(QUIET_LAKE, {}) == 6


def test_a_first_build_starts_at_the_latest_creation() -> None:
    replaced = [*QUIET_LAKE, commit(6, "REPLACE TABLE AS SELECT", 0), commit(7, "MERGE", 0)]
    assert creation_versions(replaced) == [0, 6]
    assert start(replaced, None) == 6


def test_a_first_build_without_a_creation_needs_the_whole_history() -> None:
    history = [commit(0, "WRITE", 3), commit(1, "OPTIMIZE", 2), commit(2, "MERGE", 1)]
    assert start(history, None) == 0
    cut = history[1:]
    with pytest.raises(
        ChangeFeedGap,
        match=r"no longer starts at the table's creation: its "
        r"history now starts at version 1",
    ):
        start(cut, None)
    assert start(cut, None, gaps=("*",)) == 2  # the oldest that may hold changes


def test_a_tenant_whose_changes_are_gone_stops_the_read_naming_it() -> None:
    cut = QUIET_LAKE[3:]  # the history now starts at version 3
    with pytest.raises(ChangeFeedGap) as stopped:
        start(cut, {"acme": 0, "globex": 2, "initech": 1})
    message = str(stopped.value)
    assert "for tenant acme (after version 0), tenant initech (after version 1):" in message
    assert "globex" not in message  # its next version, 3, is still there
    assert "accept_change_feed_gaps" in message
    assert start(cut, {"acme": 0, "globex": 2, "initech": 1}, gaps=("acme", "initech")) == 5
    assert start(cut, {"acme": 0}, gaps=("*",)) == 5


def test_history_rows_become_commits_with_their_tags() -> None:
    rows = [
        {
            "version": 1,
            "operation": "MERGE",
            "timestamp": NOW,
            "userMetadata": json.dumps({"table": "lake.records", "tenants": ["acme"]}),
        },
        {"version": 0, "operation": "CREATE TABLE", "timestamp": NOW, "userMetadata": None},
    ]
    commits = commits_of_history(rows, "lake.records")
    assert [c.version for c in commits] == [0, 1]
    assert commits[1].tenants == frozenset({"acme"})
    assert commits_of_history(rows, "lake.other")[1].tenants is None
