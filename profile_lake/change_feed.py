"""Where the identity graph's read of a Delta change feed can start, from the table's history.

A commit tagged with the tenants it can change (merge_with_deletes tags its MERGEs) is passed
over for the other tenants: a tenant without changes is not held to a start at its last one.

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

import json
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
    """One row of DESCRIBE HISTORY. `tenants`: the only tenants the commit can change, when its
    tag says so (None: any tenant)."""

    version: int
    operation: str
    timestamp: datetime
    tenants: frozenset[str] | None = None

    def may_change(self, tenant: str | None) -> bool:
        """Whether the commit may change rows (of `tenant`, when one is given)."""
        if self.operation in MAINTENANCE_OPERATIONS:
            return False
        return tenant is None or self.tenants is None or tenant in self.tenants


def commit_tenants(user_metadata: str | None, table: str) -> frozenset[str] | None:
    """The tenants a commit of `table` names in its userMetadata tag
    (macros/delta/tag_delta_commit_tenants.sql: `{"table": ..., "tenants": [...]}`), or None:
    no tag, another table's tag (the setting is the session's), or not a tag at all."""
    if not user_metadata:
        return None
    try:
        tag = json.loads(user_metadata)
    except ValueError:
        return None
    if not isinstance(tag, dict) or tag.get("table") != table:
        return None
    tenants = tag.get("tenants")
    if not isinstance(tenants, list) or not all(isinstance(t, str) for t in tenants):
        return None
    return frozenset(tenants)


def first_change_after(
    history: Iterable[Commit], watermark: int, tenant: str | None = None
) -> Commit | None:
    """The first commit after `watermark` that may change rows (of `tenant`, when one is
    given); None when only maintenance and other tenants' commits follow."""
    later = sorted(
        (c for c in history if c.version > watermark and c.may_change(tenant)),
        key=lambda commit: commit.version,
    )
    return later[0] if later else None


def change_feed_readable(
    history: Iterable[Commit],
    watermark: int,
    oldest_readable: datetime,
    tenant: str | None = None,
) -> bool:
    """Whether the changes after `watermark` (of `tenant`, when one is given) can be read: the
    history still holds every version after it, and the first one that may change rows was
    committed at or after `oldest_readable` (or there is none)."""
    commits = list(history)
    if not commits or watermark + 1 < min(c.version for c in commits):
        return False
    first = first_change_after(commits, watermark, tenant)
    return first is None or first.timestamp >= oldest_readable


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
