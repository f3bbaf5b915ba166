"""When a purge is due (SPEC.md section 7): within the purge horizon after a request is
applied, no file of the lake may hold what it erased. Runs and the watcher's polls start a
purge once half the horizon has passed since the oldest request no purge has covered, so the
purge has the other half to complete. Read without Spark (a run's end and an idle watcher ask
often; the tables are small): `read_purge_state` uses the delta-rs reader."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

# the share of the horizon after which a purge starts
PURGE_LEAD = 0.5


@dataclass(frozen=True)
class PurgeState:
    """When requests were applied (erasure_events, `fixed`) and purges completed
    (purge_events), as aware UTC times."""

    applied: tuple[datetime, ...] = ()
    purged: tuple[datetime, ...] = ()


def unpurged(state: PurgeState) -> list[datetime]:
    """Application times of requests no purge completed after."""
    last_purge = max(state.purged, default=None)
    return sorted(at for at in state.applied if last_purge is None or at > last_purge)


def purge_due(state: PurgeState, horizon_hours: float, now: datetime) -> bool:
    """Whether a purge should start now: half the horizon has passed since the oldest request
    no purge covers."""
    waiting = unpurged(state)
    return bool(waiting) and now >= waiting[0] + timedelta(hours=horizon_hours * PURGE_LEAD)


def _aware(moments: Iterable[datetime | None]) -> tuple[datetime, ...]:
    return tuple(
        moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        for moment in moments
        if moment is not None
    )


def read_purge_state(home: Path, schema: str) -> PurgeState:
    """The lake's PurgeState from `<schema>_control` under `home` (empty before any request)."""
    from profile_lake.delta_reader import read_delta

    control = home / "warehouse" / f"{schema}_control.db"
    events, purges = control / "erasure_events", control / "purge_events"
    # the erased set is created with the first request applied: none, nothing to purge for
    if not (control / "erased_set" / "_delta_log").is_dir():
        return PurgeState()
    applied = [
        row["at"]
        for row in read_delta(events, ["event", "at"]).to_pylist()
        if row["event"] == "fixed"
    ]
    purged = (
        read_delta(purges, ["purged_at"]).column("purged_at").to_pylist()
        if (purges / "_delta_log").is_dir()
        else []
    )
    return PurgeState(_aware(applied), _aware(purged))
