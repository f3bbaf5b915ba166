"""A watcher's status file, and whether the watcher is keeping up.

Each `profile-lake watch` process keeps `<PROFILE_LAKE_HOME>/watch/<schema>/<host>-<pid>.json`
up to date (after each look at the landing folder and each run): its schedule, whether a run
is in flight, the files waiting for a run and since when, its last run. `profile-lake report`
reads these files (no Spark) to say when each watcher last ran and whether it keeps up;
the run history says what each run did. A watcher starting removes the files of this host's
watchers that are gone.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

STATUS_DIR = "watch"
# A watcher on another host whose process cannot be seen, idle and silent for this many polls
# (and at least STALE_MIN_SECONDS), has stopped.
STALE_POLLS = 3
STALE_MIN_SECONDS = 60.0


def status_dir(home: Path, schema: str) -> Path:
    return home / STATUS_DIR / schema


def status_path(home: Path, schema: str, host: str, pid: int) -> Path:
    return status_dir(home, schema) / f"{host}-{pid}.json"


def iso(moment: datetime | None) -> str | None:
    """`2026-05-01T12:03:04Z` (a naive time is UTC, as the lake's tables hold them)."""
    if moment is None:
        return None
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(value: object) -> datetime | None:
    """An aware UTC time from an ISO text or a datetime (naive: UTC); None for anything else."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def write_status(path: Path, status: Mapping[str, Any]) -> None:
    """Replace the status file in one step (a reader never sees half of it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(f".{path.name}.tmp")
    staging.write_text(json.dumps(status, sort_keys=True, default=str) + "\n")
    os.replace(staging, path)


def read_statuses(home: Path, schema: str) -> list[dict[str, Any]]:
    """Every watcher status file of the schema (none when no watcher ever ran)."""
    folder = status_dir(home, schema)
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("*.json")):
        try:
            found.append(json.loads(path.read_text()))
        except (OSError, ValueError):  # removed or being replaced meanwhile
            continue
    return found


def late_after_seconds(status: Mapping[str, Any]) -> float:
    """How long a landed file may wait for a run before the watcher is behind: a run in
    flight (as long as the last run took) and the minimum interval may pass before its run
    starts, plus a poll to see it; twice that is late."""
    last_run = status.get("last_run") or {}
    longest = max(
        float(status.get("min_interval_seconds") or 0.0), float(last_run.get("seconds") or 0.0)
    )
    return 2 * longest + float(status.get("poll_seconds") or 0.0)


def keeping_up(
    status: Mapping[str, Any], now: datetime, alive: bool | None
) -> tuple[bool | None, str]:
    """Whether the watcher of `status` keeps up, and why, as the report says it. `alive`: its
    process runs (None: on another host, not known). None when stopped: nothing to judge."""
    updated = parse_iso(status.get("updated_at"))
    heard = f"last heard from at {iso(updated)}" if updated else "never heard from"
    if status.get("state") == "stopped":
        return None, f"stopped at {status.get('stopped_at') or iso(updated)}"
    if alive is False:
        return False, f"its process is gone without stopping (killed?); {heard}"
    poll = float(status.get("poll_seconds") or 0.0)
    stale = timedelta(seconds=max(STALE_POLLS * poll, STALE_MIN_SECONDS))
    if (
        alive is None
        and status.get("state") != "running"
        and (not updated or now - updated > stale)
    ):
        return False, f"not heard from for over {stale.total_seconds():.0f} s; {heard}"
    failures = int(status.get("consecutive_failures") or 0)
    if failures:
        message = (status.get("last_run") or {}).get("message") or "see its output"
        return False, f"its last {failures} run(s) failed: {message}"
    waiting = int(status.get("files_waiting") or 0)
    oldest = parse_iso(status.get("oldest_waiting_since"))
    if waiting and oldest is not None:
        age = (now - oldest).total_seconds()
        if age > late_after_seconds(status):
            return False, f"{waiting} landed files waiting for a run since {iso(oldest)}"
        return True, f"{waiting} landed files waiting {age:.0f} s for the next run"
    return True, "every landed file is in a run"
