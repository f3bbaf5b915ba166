"""A `profile-lake watch` status file (profile_lake.watch.status) for the unit tests."""

from __future__ import annotations

from typing import Any


def watcher_status(**fields: Any) -> dict[str, Any]:
    """An idle watcher heard from two seconds before noon whose last run succeeded at 11:58,
    with `fields` in place of the defaults."""
    base = {
        "pid": 4242,
        "host": "h1",
        "state": "idle",
        "started_at": "2026-05-01T08:00:00Z",
        "updated_at": "2026-05-01T11:59:58Z",
        "poll_seconds": 5.0,
        "min_interval_seconds": 30.0,
        "files_waiting": 0,
        "oldest_waiting_since": None,
        "consecutive_failures": 0,
        "last_run": {"status": "success", "seconds": 40.0, "ended_at": "2026-05-01T11:58:00Z"},
    }
    return {**base, **fields}
