"""Which tenants get a salt: every tenant named by a staged line of the `erasures/` stream that
has none yet. Pure; the Spark side (profile_lake.spark.erasure) reads and writes the table."""

from __future__ import annotations

from collections.abc import Iterable

from profile_lake.erasure.hashing import new_salt
from profile_lake.ingest.lines import UNREADABLE_TENANT


def tenants_needing_salts(requesting: Iterable[str | None], salted: Iterable[str]) -> list[str]:
    """The tenants of staged requests without a salt, sorted; unreadable tenants get none."""
    have = set(salted)
    return sorted(
        {tenant for tenant in requesting if tenant and tenant != UNREADABLE_TENANT} - have
    )


def salts_for(tenants: Iterable[str]) -> dict[str, bytes]:
    """A new salt for each tenant (drawn once: an existing salt is never replaced)."""
    return {tenant: new_salt() for tenant in tenants}
