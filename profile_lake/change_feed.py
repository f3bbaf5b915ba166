"""Where a consumer's read of a Delta change feed can start, from the table's history: the one
place these rules live, for the SQL models (through the adapter's change_feed_start_version and
delta_table_creations, which hand it the history the macros read) and the Python models.

A commit tagged with the tenants it can change (merge_with_deletes tags its MERGEs) is passed
over for the other tenants: a tenant without changes is not held to a start at its last one.

A consumer that has taken a table's changes up to version `watermark` reads the feed from the
first later version that may hold changes. Maintenance commits hold none (OPTIMIZE and REORG
rewrite files with `dataChange` false; VACUUM and table properties touch no rows), so they are
skipped: otherwise a table with only maintenance for a week would start the read at a commit
that Delta no longer reads. Unless the session turns the check off (the profile does, for
record_notifications), Delta refuses a change-feed read starting at a version committed longer
ago than the table's `delta.deletedFileRetentionDuration`
(DELTA_UNSUPPORTED_TIME_TRAVEL_BEYOND_DELETED_FILE_RETENTION_DURATION); the identity graph keeps
to it all the same, since VACUUM keeps no more for it. No read can start before the oldest
version left in the history.

A read also stops, naming what to do, when the log no longer holds what it must read
(:func:`change_feed_start_version`): Delta removes commits older than
`delta.logRetentionDuration`, and starting at the oldest version left would skip changes
silently.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping
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

# DESCRIBE HISTORY operations that create or replace a table (with or without AS SELECT)
CREATION_OPERATION = re.compile(r"(CREATE|REPLACE) ")
EVERY_GAP = "*"

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


class ChangeFeedGap(RuntimeError):
    """A read would have to start before the oldest version left in the table's history."""


def commits_of_history(rows: Iterable[Mapping[str, object]], table: str) -> list[Commit]:
    """DESCRIBE HISTORY rows (version, operation, timestamp, userMetadata) of `table`
    (`schema.table`, as its commit tags name it) as commits, oldest first."""
    commits = [
        Commit(
            int(row["version"]),  # type: ignore[arg-type]
            str(row["operation"]),
            row["timestamp"],  # type: ignore[arg-type]
            commit_tenants(row.get("userMetadata"), table),  # type: ignore[arg-type]
        )
        for row in rows
    ]
    return sorted(commits, key=lambda commit: commit.version)


def creation_versions(history: Iterable[Commit]) -> list[int]:
    """The versions still in the history that created or replaced the table, oldest first. A
    replacement's change feed deletes every row of the table it replaced and inserts every row
    of the new one."""
    return sorted(c.version for c in history if CREATION_OPERATION.match(c.operation))


def change_feed_start_version(
    history: list[Commit],
    watermarks: Mapping[str, int] | None,
    *,
    table: str,
    consumer: str,
    accepted_gaps: Collection[str] = (),
) -> int:
    """The first version of `table`'s change feed that `consumer` must read so that every
    tenant gets each change after its watermark (`watermarks`: tenant -> the newest version
    whose changes the consumer holds; a tenant without one maps to the oldest version left
    less one). One past the latest version when nothing is left to read.

    `watermarks` None is a first build or full refresh: it starts at the table's latest
    creation or replacement, or, with none left in the history, at its oldest version, which
    must then be the first (else ChangeFeedGap, unless '*' is in `accepted_gaps`). An
    incremental read stops (ChangeFeedGap) when a tenant's next version is gone from the
    history, unless the tenant (or '*') is in `accepted_gaps`.
    """
    versions = [commit.version for commit in history]
    oldest, latest = min(versions), max(versions)
    if watermarks is None:
        creations = creation_versions(history)
        if creations:
            return creations[-1]
        if oldest > 0 and EVERY_GAP not in accepted_gaps:
            raise ChangeFeedGap(
                f"the change feed of {table} no longer starts at the table's creation: its "
                f"history now starts at version {oldest} (Delta removes commits older than "
                f"delta.logRetentionDuration), so a first build or full refresh of {consumer} "
                f"would leave out the changes before it. To build from version {oldest} on, run "
                "with --vars \"{accept_change_feed_gaps: ['*']}\"."
            )
        first = first_change_after(history, oldest - 1)
        return latest + 1 if first is None else first.version
    stranded = [
        f"{tenant} (after version {watermark})"
        for tenant, watermark in sorted(watermarks.items())
        if watermark + 1 < oldest and tenant not in accepted_gaps and EVERY_GAP not in accepted_gaps
    ]
    if stranded:
        raise ChangeFeedGap(
            f"the change feed of {table} no longer holds the changes {consumer} has still to "
            f"read for tenant {', tenant '.join(stranded)}: its history now starts at version "
            f"{oldest} (Delta removes commits older than delta.logRetentionDuration). Re-read "
            f"those tenants' current rows from {table}, then go on from version {oldest} with "
            "--vars '{accept_change_feed_gaps: [<tenant>, ...]}'. Raise "
            f"delta.logRetentionDuration on {table} above the longest time a tenant may wait, so "
            "that it does not happen again."
        )
    starts = [latest + 1]
    for tenant, watermark in watermarks.items():
        first = first_change_after(history, watermark, tenant)
        if first is not None:
            starts.append(first.version)
    return min(starts)
