"""Where a change-feed read starts (profile_lake.change_feed): maintenance commits and other
tenants' tagged commits are passed over, and a start older than Delta's deleted-file retention
or before the history is unreadable."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from profile_lake.change_feed import (
    Commit,
    change_feed_readable,
    commit_tenants,
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
