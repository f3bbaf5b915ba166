"""When a purge is due: half the horizon after the oldest request no purge covers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from profile_lake.erasure.due import PurgeState, purge_due, unpurged

NOW = datetime(2026, 12, 10, tzinfo=UTC)


def test_no_request_no_purge() -> None:
    assert not purge_due(PurgeState(), 168, NOW)


def test_a_purge_starts_half_the_horizon_after_the_oldest_unpurged_request() -> None:
    state = PurgeState(applied=(NOW - timedelta(hours=84), NOW - timedelta(hours=1)))
    assert purge_due(state, 168, NOW)
    assert not purge_due(state, 168, NOW - timedelta(minutes=1))


def test_a_purge_after_a_request_covers_it_and_not_a_later_one() -> None:
    applied = (NOW - timedelta(hours=100), NOW - timedelta(hours=10))
    purged = (NOW - timedelta(hours=50),)
    state = PurgeState(applied, purged)
    assert unpurged(state) == [NOW - timedelta(hours=10)]
    assert not purge_due(state, 168, NOW)
    assert purge_due(state, 10, NOW)
