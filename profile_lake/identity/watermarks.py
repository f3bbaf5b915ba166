"""Where each tenant's identity graph increment starts: the versions of `int_record_states`.

`int_record_states` is the log of the changes runs make to `records`: each run appends one
version per record it touches, numbered by its ingest batch, and each version carries the
identities of the live state it replaces (`prior_primary_id`, `prior_related_ids`). The graph
stamps every row it writes with the newest batch of the tenant's versions it has read
(`records_batch_id`); a tenant's watermark is the largest stamp of its rows, so it moves in the
same commit as the rows. The versions past it hold every identity a changed record had or has
(the first one's prior is the state the graph last read), which is what the change feed's
images of `records` gave.

A version is only taken once `records` shows it: a run that stopped between the states and
the `records` MERGE leaves versions `records` does not hold yet. A `records` MERGE applies all
of a tenant's pending versions in one commit, so it is enough to check, for each record, its
newest version past the bound (its key with that batch when live, no key when deleted), as
`record_notifications` does (docs/notifications.md). Every version at or below `records`' own
watermark (its newest `ingest_batch_id` for the tenant) is applied, and so is every version at or
below the graph's watermark (it was stamped only when `records` showed them): the check reads
the versions past the graph's watermark, or past `records`' when the tenant has none.

A tenant whose versions are not all shown is resolved whole from `records` as it is, and
stamped with no batch, so that the next run resolves it whole again (a run reading `records` at
one version is always consistent with it). Nothing here imports Spark.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TenantVersions:
    """What a run knows of one tenant before resolving it.

    `graph_watermark`: the largest `records_batch_id` of the tenant's rows in the graph (None:
    no rows, or rows from before the column). `records_watermark`: `records`' newest
    `ingest_batch_id` of the tenant (None: no live record). `newest_batch`: the newest
    `last_ingest_batch_id` of its versions in `int_record_states` (None: none). `shown`:
    `records` shows each record's newest version past `check_bound`. `without_prior`: some
    version past the graph's watermark does not say what it replaces (written before
    `prior_is_live` existed).
    """

    tenant_id: str
    graph_watermark: int | None
    records_watermark: int | None
    newest_batch: int | None
    shown: bool = True
    without_prior: bool = False


def check_bound(graph_watermark: int | None, records_watermark: int | None) -> int:
    """The batch past which a tenant's versions are read: the graph's watermark, else
    `records`' own (every version at or below either is applied), else every version (-1)."""
    if graph_watermark is not None:
        return graph_watermark
    return -1 if records_watermark is None else records_watermark


def reads_increment(tenant: TenantVersions) -> bool:
    """Whether the tenant's changes can be taken from its versions past the graph's watermark:
    it has one, `records` shows every version past it, each says what it replaces, and the
    states still hold versions up to it (a rebuilt `int_record_states`, renumbered from an
    earlier batch, holds fewer: the tenant is resolved whole)."""
    return (
        tenant.graph_watermark is not None
        and tenant.shown
        and not tenant.without_prior
        and tenant.graph_watermark <= (-1 if tenant.newest_batch is None else tenant.newest_batch)
    )


def batch_stamp(tenant: TenantVersions) -> int | None:
    """The `records_batch_id` stamped on the rows the run writes for the tenant: its newest
    version's batch once `records` shows every version (None: it does not, or there is none)."""
    return tenant.newest_batch if tenant.shown else None
