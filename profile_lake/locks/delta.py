"""Run locks stored in a Delta table of the shared metastore.

Acquiring: read the table, decide (profile_lake.locks.rules), then MERGE this run's keys in,
taking over stale holders by their run id only. Delta's optimistic concurrency makes two
MERGEs that raced fail one of them (both read the whole table), and a read-back settles
the case where two conflicting keys (`tenant:*` and `tenant:x`) were written one after the
other: the earlier run keeps its keys. While held, a thread renews the lease so that other
hosts can tell a live holder from a dead one.
"""

from __future__ import annotations

import os
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from pyspark.sql import SparkSession

from profile_lake.locks.process import process_alive, process_started
from profile_lake.locks.rules import (
    Holder,
    blocked_message,
    decide,
    describe_key,
    keys_conflict,
    wins_tie,
)
from profile_lake.sql import sql_string

Progress = Callable[[str], None]
POLL_SECONDS = 2.0
PROGRESS_EVERY_SECONDS = 15.0
EPOCH = datetime(1970, 1, 1)

LOCK_COLUMNS = """
    lock_key string not null comment 'tenant:<id>, tenant:* (every tenant), ingest or whole-lake',
    run_id string not null comment 'dbt invocation id of the holder',
    host string not null comment 'host of the holding process',
    pid int not null comment 'process id of the holder on its host',
    process_started string not null comment 'start time of that process (tells a reused pid apart)',
    command string not null comment 'what the holder runs',
    acquired_at timestamp not null comment 'when the holder took the lock (UTC)',
    expires_at timestamp not null comment 'lease end; the holder renews it while it runs'
"""


class LockNotAcquiredError(RuntimeError):
    """Another run holds a lock this run needs, past the time this run may wait."""


@dataclass(frozen=True)
class LockRequest:
    table: str
    keys: tuple[str, ...]
    run_id: str
    command: str
    wait_seconds: float
    lease_seconds: float


@dataclass
class HeldLocks:
    """Locks this process holds, with the thread renewing their lease."""

    request: LockRequest
    stop: threading.Event = field(default_factory=threading.Event)
    renewer: threading.Thread | None = None


def _is_conflict(error: Exception) -> bool:
    text = str(error)
    return "Concurrent" in text or "ConflictingCommit" in text or "already exists" in text


def ensure_lock_table(spark: SparkSession, table: str) -> None:
    schema = table.rsplit(".", 1)[0]
    for attempt in range(5):
        try:
            spark.sql(f"create schema if not exists {schema}")
            spark.sql(
                f"create table if not exists {table} ({LOCK_COLUMNS}) using delta "
                "comment 'Run locks of profile_lake: one writer per tenant (profile_lake.locks)'"
            )
            return
        except Exception as error:  # two processes creating it at once
            # the other one's folder is there but not yet its first commit, or its first
            # commit came in between
            creating = any(
                code in str(error)
                for code in ("DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION", "DELTA_PROTOCOL_CHANGED")
            )
            if not (_is_conflict(error) or creating) or attempt == 4:
                raise
            time.sleep(random.uniform(0.2, 1.0))


def _from_micros(micros: int) -> datetime:
    return EPOCH + timedelta(microseconds=micros)


def read_holders(spark: SparkSession, table: str) -> list[Holder]:
    # times as micros since the epoch: collect() would turn timestamps into local times
    rows = spark.sql(
        "select lock_key, run_id, host, pid, process_started, command, "
        "unix_micros(acquired_at) as acquired_at, unix_micros(expires_at) as expires_at "
        f"from {table}"
    ).collect()
    return [
        Holder(
            **{
                **row.asDict(),
                "acquired_at": _from_micros(row.acquired_at),
                "expires_at": _from_micros(row.expires_at),
            }
        )
        for row in rows
    ]


def _my_holder(request: LockRequest, key: str, now: datetime) -> Holder:
    pid = os.getpid()
    return Holder(
        lock_key=key,
        run_id=request.run_id,
        host=socket.gethostname(),
        pid=pid,
        process_started=process_started(pid),
        command=request.command,
        acquired_at=now,
        expires_at=now + timedelta(seconds=request.lease_seconds),
    )


def _merge_keys(
    spark: SparkSession, request: LockRequest, now: datetime, takeover: list[str]
) -> None:
    rows = []
    for key in request.keys:
        holder = _my_holder(request, key, now)
        rows.append(
            "select "
            + ", ".join(
                [
                    f"{sql_string(holder.lock_key)} as lock_key",
                    f"{sql_string(holder.run_id)} as run_id",
                    f"{sql_string(holder.host)} as host",
                    f"{holder.pid} as pid",
                    f"{sql_string(holder.process_started)} as process_started",
                    f"{sql_string(holder.command)} as command",
                    f"timestamp'{holder.acquired_at:%Y-%m-%d %H:%M:%S.%f}' as acquired_at",
                    f"timestamp'{holder.expires_at:%Y-%m-%d %H:%M:%S.%f}' as expires_at",
                ]
            )
        )
    replaceable = ", ".join(sql_string(run_id) for run_id in [request.run_id, *takeover])
    spark.sql(
        f"merge into {request.table} as held using ({' union all '.join(rows)}) as wanted "
        "on held.lock_key = wanted.lock_key "
        f"when matched and held.run_id in ({replaceable}) then update set * "
        "when not matched then insert *"
    )


def _utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _lost_race(holders: list[Holder], request: LockRequest) -> bool:
    """After writing: does a conflicting key of an earlier run stand beside ours?"""
    mine = [
        holder
        for holder in holders
        if holder.run_id == request.run_id and holder.lock_key in request.keys
    ]
    if len(mine) != len(request.keys):
        return True  # a key was matched by another holder and not replaced
    others = [holder for holder in holders if holder.run_id != request.run_id]
    return any(
        keys_conflict(own.lock_key, other.lock_key) and not wins_tie(own, other)
        for own in mine
        for other in others
    )


def acquire(spark: SparkSession, request: LockRequest, progress: Progress) -> HeldLocks:
    """Take every key of the request, waiting up to request.wait_seconds for other runs."""
    ensure_lock_table(spark, request.table)
    host = socket.gethostname()
    started = time.monotonic()
    last_progress = -PROGRESS_EVERY_SECONDS
    while True:
        now = _utcnow()
        holders = read_holders(spark, request.table)
        decision = decide(
            request.keys, holders, request.run_id, now, host, os.getpid(), process_alive
        )
        if decision.blockers:
            waited = time.monotonic() - started
            message = blocked_message(decision.blockers)
            if waited >= request.wait_seconds:
                raise LockNotAcquiredError(
                    f"{message}. Gave up after {waited:.0f} s (var tenant_lock_wait_seconds="
                    f"{request.wait_seconds:g}). The lock is released when that run ends, and "
                    "recovered once its process is gone or its lease has expired."
                )
            if time.monotonic() - last_progress >= PROGRESS_EVERY_SECONDS:
                progress(f"{message}; waiting (up to {request.wait_seconds:g} s)")
                last_progress = time.monotonic()
            time.sleep(POLL_SECONDS)
            continue
        for holder, reason in decision.stale:
            progress(
                f"recovering the stale lock on {describe_key(holder.lock_key)} of "
                f"{holder.describe()}: {reason}"
            )
        try:
            _merge_keys(spark, request, now, [holder.run_id for holder, _ in decision.stale])
        except Exception as error:
            if not _is_conflict(error):
                raise
            time.sleep(random.uniform(0.2, 1.5))  # another run wrote at the same time
            continue
        if _lost_race(read_holders(spark, request.table), request):
            _delete_mine(spark, request)
            time.sleep(random.uniform(0.2, 1.5))
            continue
        held = HeldLocks(request)
        held.renewer = threading.Thread(
            target=_renew_until_stopped, args=(spark, held), name="lock-lease", daemon=True
        )
        held.renewer.start()
        return held


def _renew_until_stopped(spark: SparkSession, held: HeldLocks) -> None:
    request = held.request
    while not held.stop.wait(request.lease_seconds / 3):
        expires = _utcnow() + timedelta(seconds=request.lease_seconds)
        try:
            spark.sql(
                f"update {request.table} set expires_at = "
                f"timestamp'{expires:%Y-%m-%d %H:%M:%S.%f}' "
                f"where {_mine(request)}"
            )
        except Exception:  # a conflicting commit: renew at the next tick
            continue


def _mine(request: LockRequest) -> str:
    """The rows of the request's keys held by its run (a run may hold several requests: its
    tenants from its start, the whole-lake step from its first whole-lake model)."""
    keys = ", ".join(sql_string(key) for key in request.keys)
    return f"run_id = {sql_string(request.run_id)} and lock_key in ({keys})"


def _delete_mine(spark: SparkSession, request: LockRequest) -> None:
    for attempt in range(20):
        try:
            spark.sql(f"delete from {request.table} where {_mine(request)}")
            return
        except Exception as error:
            if not _is_conflict(error) or attempt == 19:
                raise
            time.sleep(random.uniform(0.1, 0.5))


def release(spark: SparkSession, held: HeldLocks) -> None:
    held.stop.set()
    if held.renewer is not None:
        held.renewer.join(timeout=60)
    _delete_mine(spark, held.request)


@contextmanager
def holding(spark: SparkSession, request: LockRequest, progress: Progress) -> Iterator[HeldLocks]:
    """The request's locks for the duration of a block."""
    held = acquire(spark, request, progress)
    try:
        yield held
    finally:
        release(spark, held)
