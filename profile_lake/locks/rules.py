"""Which lock requests conflict, when a holder is stale, and how a holder is described.

Pure logic: the Delta table that stores the locks is in profile_lake.locks.delta.

Keys: `tenant:<id>` locks one tenant, `tenant:*` every tenant (a run without var tenants),
`ingest` the landing ingest, `whole-lake` the steps that rebuild tables of every tenant (seeds,
identity, marts, monitoring). Two keys conflict when they are equal, or when both are tenant
keys and one of them is `tenant:*`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

EVERY_TENANT_KEY = "tenant:*"
INGEST_KEY = "ingest"
WHOLE_LAKE_KEY = "whole-lake"


def tenant_keys(tenants: Iterable[str] | None) -> list[str]:
    """The lock keys of a run's tenant scope (None: every tenant)."""
    if tenants is None:
        return [EVERY_TENANT_KEY]
    return sorted({f"tenant:{tenant}" for tenant in tenants})


def keys_conflict(a: str, b: str) -> bool:
    if a == b:
        return True
    both_tenant_keys = a.startswith("tenant:") and b.startswith("tenant:")
    return both_tenant_keys and EVERY_TENANT_KEY in (a, b)


def describe_key(key: str) -> str:
    if key == EVERY_TENANT_KEY:
        return "every tenant"
    if key.startswith("tenant:"):
        return f"tenant {key.removeprefix('tenant:')}"
    if key == WHOLE_LAKE_KEY:
        return "the whole-lake step"
    return key


@dataclass(frozen=True)
class Holder:
    """One row of the lock table: a key held by a run."""

    lock_key: str
    run_id: str
    host: str
    pid: int
    process_started: str  # the process's start time on its host: tells a reused pid apart
    command: str
    acquired_at: datetime
    expires_at: datetime

    def describe(self) -> str:
        return (
            f"run {self.run_id} ({self.command}, pid {self.pid} on {self.host}, "
            f"since {self.acquired_at:%Y-%m-%d %H:%M:%S}Z, lease until "
            f"{self.expires_at:%H:%M:%S}Z)"
        )


def stale_reason(
    holder: Holder,
    now: datetime,
    host: str,
    pid: int,
    process_alive: Callable[[int, str], bool],
) -> str | None:
    """Why a holder (of another run) no longer holds its lock, or None while it does.

    On the holder's own host a dead process is certain at once, and so is an earlier dbt
    invocation of this very process (invocations of one process run one after another; one
    that failed before releasing left its lock behind). From another host only the lease
    tells (the holder renews it while it runs).
    """
    if holder.host == host and holder.pid == pid:
        return "it is an earlier dbt invocation of this process"
    if holder.host == host and not process_alive(holder.pid, holder.process_started):
        return f"its process {holder.pid} on {host} is gone"
    if holder.expires_at < now:
        return f"its lease expired at {holder.expires_at:%Y-%m-%d %H:%M:%S}Z"
    return None


@dataclass(frozen=True)
class Decision:
    """What a run asking for `keys` finds in the lock table."""

    blockers: tuple[tuple[str, Holder], ...]  # (my key, the live holder blocking it)
    stale: tuple[tuple[Holder, str], ...]  # holders to take over, with the reason


def decide(
    keys: Iterable[str],
    holders: Iterable[Holder],
    run_id: str,
    now: datetime,
    host: str,
    pid: int,
    process_alive: Callable[[int, str], bool],
) -> Decision:
    keys = list(keys)
    blockers: list[tuple[str, Holder]] = []
    stale: list[tuple[Holder, str]] = []
    for holder in holders:
        if holder.run_id == run_id:
            continue
        conflicting = [key for key in keys if keys_conflict(key, holder.lock_key)]
        if not conflicting:
            continue
        reason = stale_reason(holder, now, host, pid, process_alive)
        if reason is not None:
            stale.append((holder, reason))
        else:
            blockers.extend((key, holder) for key in conflicting)
    return Decision(tuple(blockers), tuple(stale))


def wins_tie(mine: Holder, other: Holder) -> bool:
    """Two runs that both wrote conflicting keys: the earlier one keeps them."""
    return (mine.acquired_at, mine.run_id) < (other.acquired_at, other.run_id)


def blocked_message(blockers: Iterable[tuple[str, Holder]]) -> str:
    seen: dict[str, str] = {}
    for key, holder in blockers:
        seen.setdefault(describe_key(key), holder.describe())
    return "; ".join(f"{what} is locked by {holder}" for what, holder in seen.items())
