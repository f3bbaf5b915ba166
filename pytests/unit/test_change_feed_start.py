"""Where a change-feed read starts (profile_lake.change_feed): maintenance commits are passed
over, and a start older than Delta's deleted-file retention or before the history is
unreadable."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from profile_lake.change_feed import (
    READ_MARGIN,
    Commit,
    change_feed_readable,
    deleted_file_retention,
    first_change_after,
    oldest_readable_commit,
)

NOW = datetime(2026, 11, 25, 12, 0)
OLDEST_READABLE = NOW - timedelta(days=7)
MONTH_AGO = NOW - timedelta(days=30)


def commit(version: int, operation: str, age_days: float) -> Commit:
    return Commit(version, operation, NOW - timedelta(days=age_days))


QUIET_LAKE = [
    commit(0, "CREATE OR REPLACE TABLE AS SELECT", 40),
    commit(1, "MERGE", 30),
    commit(2, "OPTIMIZE", 30),
    commit(3, "VACUUM START", 30),
    commit(4, "VACUUM END", 30),
    commit(5, "MERGE", 0),
]


def test_maintenance_commits_are_passed_over() -> None:
    assert first_change_after(QUIET_LAKE, 1).version == 5
    assert change_feed_readable(QUIET_LAKE, 1, OLDEST_READABLE)


def test_a_month_old_first_change_is_unreadable() -> None:
    assert first_change_after(QUIET_LAKE, 0).version == 1
    assert not change_feed_readable(QUIET_LAKE, 0, OLDEST_READABLE)


def test_every_commit_that_changes_rows_counts() -> None:
    history = [commit(0, "CREATE TABLE", 40), commit(1, "WRITE", 20), commit(2, "MERGE", 0)]
    assert first_change_after(history, 0).version == 1
    assert not change_feed_readable(history, 0, OLDEST_READABLE)
    assert change_feed_readable(history, 1, OLDEST_READABLE)


def test_a_consumer_up_to_date_reads_nothing() -> None:
    assert first_change_after(QUIET_LAKE, 5) is None
    assert change_feed_readable(QUIET_LAKE, 5, OLDEST_READABLE)


def test_a_start_before_the_history_is_unreadable() -> None:
    # versions 0 to 2 are gone from the log (delta.logRetentionDuration)
    assert not change_feed_readable(QUIET_LAKE[3:], 1, MONTH_AGO - timedelta(days=1))
    assert change_feed_readable(QUIET_LAKE[3:], 2, MONTH_AGO - timedelta(days=1))


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


def test_a_read_starts_no_earlier_than_the_retention_back_from_now_less_a_margin() -> None:
    assert oldest_readable_commit(NOW, None) == NOW - timedelta(weeks=1) + READ_MARGIN
    assert oldest_readable_commit(NOW, "interval 2 days") == NOW - timedelta(days=2) + READ_MARGIN
