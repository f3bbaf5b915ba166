"""Where the identity graph's read of `identity_map`'s change feed can start, from the table's
history.

A consumer that has taken a table's changes up to version `watermark` reads the feed from the
first later version that may hold changes. Maintenance commits hold none (OPTIMIZE and REORG
rewrite files with `dataChange` false; VACUUM and table properties touch no rows), so they are
skipped: otherwise a table with only maintenance for a week would start the read at a commit
that Delta no longer reads. Delta refuses a change-feed read starting at a version committed
longer ago than the table's `delta.deletedFileRetentionDuration`
(DELTA_UNSUPPORTED_TIME_TRAVEL_BEYOND_DELETED_FILE_RETENTION_DURATION), and VACUUM keeps no more:
the graph keeps to it, and resolves a tenant whole past it. No read can start before the oldest
version left in the history.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

MAINTENANCE_OPERATIONS = frozenset(
    {
        "OPTIMIZE",
        "REORG",
        "VACUUM START",
        "VACUUM END",
        "SET TBLPROPERTIES",
        "UNSET TBLPROPERTIES",
    }
)

# Delta's default `delta.deletedFileRetentionDuration`
DEFAULT_DELETED_FILE_RETENTION = timedelta(weeks=1)
# a read does not start at the very edge of the retention: a VACUUM may run meanwhile
READ_MARGIN = timedelta(hours=1)
_INTERVAL_UNITS = {
    "week": "weeks",
    "day": "days",
    "hour": "hours",
    "minute": "minutes",
    "second": "seconds",
    "millisecond": "milliseconds",
    "microsecond": "microseconds",
}


@dataclass(frozen=True)
class Commit:
    """One row of DESCRIBE HISTORY."""

    version: int
    operation: str
    timestamp: datetime

    def may_change_rows(self) -> bool:
        """Whether the commit may change rows (maintenance commits do not)."""
        return self.operation not in MAINTENANCE_OPERATIONS


def first_change_after(history: Iterable[Commit], watermark: int) -> Commit | None:
    """The first commit after `watermark` that may change rows; None when only maintenance
    follows."""
    later = sorted(
        (c for c in history if c.version > watermark and c.may_change_rows()),
        key=lambda commit: commit.version,
    )
    return later[0] if later else None


def change_feed_readable(
    history: Iterable[Commit], watermark: int, oldest_readable: datetime
) -> bool:
    """Whether the changes after `watermark` can be read: the history still holds every version
    after it, and the first one that may change rows was committed at or after
    `oldest_readable` (or there is none)."""
    commits = list(history)
    if not commits or watermark + 1 < min(c.version for c in commits):
        return False
    first = first_change_after(commits, watermark)
    return first is None or first.timestamp >= oldest_readable


def oldest_readable_commit(now: datetime, retention_setting: str | None) -> datetime:
    """The oldest commit time a change-feed read may start at: the table's deleted-file
    retention (`delta.deletedFileRetentionDuration`, None for Delta's default) back from `now`,
    less READ_MARGIN."""
    return now - deleted_file_retention(retention_setting) + READ_MARGIN


def deleted_file_retention(setting: str | None) -> timedelta:
    """`delta.deletedFileRetentionDuration` ("interval 1 week", "interval 60 days 12 hours";
    None when the table does not set it) as a duration."""
    if setting is None:
        return DEFAULT_DELETED_FILE_RETENTION
    text = setting.strip().lower().removeprefix("interval").strip()
    parts = re.findall(r"(\d+)\s*([a-z]+?)s?\b", text)
    if not parts or re.sub(r"(\d+)\s*([a-z]+?)s?\b", "", text).strip():
        raise ValueError(f"unreadable delta.deletedFileRetentionDuration: {setting!r}")
    try:
        return sum(
            (timedelta(**{_INTERVAL_UNITS[unit]: int(count)}) for count, unit in parts),
            timedelta(),
        )
    except KeyError as unknown:
        raise ValueError(
            f"unreadable delta.deletedFileRetentionDuration: {setting!r} (unit {unknown})"
        ) from None
