"""Lock rules: which keys conflict, when a holder is stale, what a blocked run is told."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from profile_lake.locks.delta import LockRequest, _lost_race
from profile_lake.locks.rules import (
    EVERY_TENANT_KEY,
    INGEST_KEY,
    WHOLE_LAKE_KEY,
    Holder,
    blocked_message,
    decide,
    keys_conflict,
    tenant_keys,
    wins_tie,
)

NOW = datetime(2026, 11, 22, 12, 0, 0)
HOST = "worker-1"
MY_PID = 100


def holder(key: str, run_id: str = "other-run", **changes: object) -> Holder:
    fields = {
        "lock_key": key,
        "run_id": run_id,
        "host": HOST,
        "pid": 200,
        "process_started": "5000",
        "command": "dbt build",
        "acquired_at": NOW - timedelta(minutes=1),
        "expires_at": NOW + timedelta(minutes=9),
    }
    return Holder(**{**fields, **changes})


def alive(pid: int, started: str) -> bool:
    return True


def dead(pid: int, started: str) -> bool:
    return False


def test_tenant_keys() -> None:
    assert tenant_keys(None) == [EVERY_TENANT_KEY]
    assert tenant_keys(["globex", "acme", "acme"]) == ["tenant:acme", "tenant:globex"]


@pytest.mark.parametrize(
    ("a", "b", "conflict"),
    [
        ("tenant:acme", "tenant:acme", True),
        ("tenant:acme", "tenant:globex", False),
        ("tenant:acme", EVERY_TENANT_KEY, True),
        (EVERY_TENANT_KEY, "tenant:globex", True),
        (EVERY_TENANT_KEY, EVERY_TENANT_KEY, True),
        (INGEST_KEY, EVERY_TENANT_KEY, False),
        (INGEST_KEY, "tenant:acme", False),
        (INGEST_KEY, INGEST_KEY, True),
        (WHOLE_LAKE_KEY, WHOLE_LAKE_KEY, True),
        (WHOLE_LAKE_KEY, EVERY_TENANT_KEY, False),
        (WHOLE_LAKE_KEY, "tenant:acme", False),
        (WHOLE_LAKE_KEY, INGEST_KEY, False),
    ],
)
def test_keys_conflict_symmetrically(a: str, b: str, conflict: bool) -> None:
    assert keys_conflict(a, b) is conflict
    assert keys_conflict(b, a) is conflict


def decide_now(keys: list[str], holders: list[Holder], process_alive=alive):
    return decide(keys, holders, "my-run", NOW, HOST, MY_PID, process_alive)


def test_a_live_holder_of_the_same_tenant_blocks() -> None:
    other = holder("tenant:acme")
    decision = decide_now(["tenant:acme"], [other, holder("tenant:globex", "third-run")])
    assert decision.blockers == (("tenant:acme", other),)
    assert decision.stale == ()


def test_every_tenant_is_blocked_by_any_tenant_and_blocks_all() -> None:
    assert decide_now([EVERY_TENANT_KEY], [holder("tenant:globex")]).blockers
    assert decide_now(["tenant:acme"], [holder(EVERY_TENANT_KEY)]).blockers
    assert not decide_now(["tenant:acme"], [holder(INGEST_KEY)]).blockers


def test_own_rows_never_block() -> None:
    assert decide_now(["tenant:acme"], [holder("tenant:acme", "my-run")]).blockers == ()


def test_a_dead_process_on_this_host_is_stale_at_once() -> None:
    decision = decide_now(["tenant:acme"], [holder("tenant:acme")], process_alive=dead)
    assert decision.blockers == ()
    ((stale, reason),) = decision.stale
    assert stale.run_id == "other-run"
    assert "process 200 on worker-1 is gone" in reason


def test_on_another_host_only_the_lease_tells() -> None:
    remote_live = holder("tenant:acme", host="worker-2")
    assert decide_now(["tenant:acme"], [remote_live], process_alive=dead).blockers
    remote_expired = holder("tenant:acme", host="worker-2", expires_at=NOW - timedelta(seconds=1))
    decision = decide_now(["tenant:acme"], [remote_expired], process_alive=dead)
    assert decision.blockers == ()
    assert "lease expired" in decision.stale[0][1]


def test_an_earlier_invocation_of_this_process_is_stale() -> None:
    mine_before = holder("tenant:acme", "earlier-run", pid=MY_PID)
    decision = decide_now(["tenant:acme"], [mine_before])
    assert decision.blockers == ()
    assert "earlier dbt invocation of this process" in decision.stale[0][1]


def test_the_earlier_writer_wins_a_race() -> None:
    early = holder(EVERY_TENANT_KEY, "run-a", acquired_at=NOW - timedelta(seconds=2))
    late = holder("tenant:acme", "run-b", acquired_at=NOW)
    assert wins_tie(early, late) and not wins_tie(late, early)
    same_time = holder("tenant:acme", "run-c", acquired_at=early.acquired_at)
    assert wins_tie(early, same_time) is ("run-a" < "run-c")


def test_the_message_names_the_tenant_and_the_holder() -> None:
    other = holder("tenant:acme", "run-123", pid=4242)
    message = blocked_message([("tenant:acme", other)])
    assert message.startswith("tenant acme is locked by run run-123 (dbt build, pid 4242 on ")
    assert "since 2026-11-22 11:59:00Z" in message
    assert "every tenant is locked" in blocked_message([(EVERY_TENANT_KEY, other)])
    assert blocked_message([(WHOLE_LAKE_KEY, other)]).startswith(
        "the whole-lake step is locked by run run-123 (dbt build, pid 4242 on "
    )


def request_for(keys: tuple[str, ...], run_id: str = "my-run") -> LockRequest:
    return LockRequest("control.run_locks", keys, run_id, "dbt build", 300.0, 600.0)


def test_a_run_holding_its_tenants_takes_the_whole_lake_step_beside_them() -> None:
    own_tenant = holder("tenant:acme", "my-run")
    own_whole_lake = holder(WHOLE_LAKE_KEY, "my-run")
    request = request_for((WHOLE_LAKE_KEY,))
    assert decide_now([WHOLE_LAKE_KEY], [own_tenant, holder("tenant:globex")]).blockers == ()
    # the tenant row held since the run's start is not mistaken for a lost race
    assert not _lost_race([own_tenant, own_whole_lake, holder("tenant:globex")], request)
    # the whole-lake row belongs to another run: lost
    assert _lost_race([own_tenant, holder(WHOLE_LAKE_KEY)], request)


def test_the_whole_lake_step_of_another_run_blocks_only_whole_lake_steps() -> None:
    other = holder(WHOLE_LAKE_KEY)
    assert decide_now([WHOLE_LAKE_KEY], [other]).blockers == ((WHOLE_LAKE_KEY, other),)
    assert decide_now(["tenant:acme"], [other]).blockers == ()
    assert decide_now([EVERY_TENANT_KEY], [other]).blockers == ()


def test_process_liveness_on_this_host() -> None:
    import os
    import subprocess

    from profile_lake.locks.process import process_alive, process_started

    me = os.getpid()
    assert process_started(me) and process_alive(me, process_started(me))
    assert not process_alive(me, "1"), "the same pid with another start time is another process"
    child = subprocess.Popen(["sleep", "30"])
    started = process_started(child.pid)
    assert process_alive(child.pid, started)
    child.kill()
    child.wait()
    assert not process_alive(child.pid, started)
