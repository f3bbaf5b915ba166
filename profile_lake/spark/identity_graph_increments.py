"""Incremental graph resolution: the Spark side of :mod:`profile_lake.identity.increments`.

A run reads `records`, `int_record_states` and `identity_map` at their latest versions and
stamps on every row it writes the newest batch of the tenant's record versions it has read
(`records_batch_id`, :mod:`profile_lake.identity.watermarks`) and the version of `identity_map`
(`identity_map_version`; `records_version` too, for reference): a tenant's watermarks are the
largest stamps of its rows, so they move in the same commit as the rows. An incremental run,
for each tenant of its scope with watermarks:

1. touched identities T: the canonical identities (current map) of the raw identities of every
   version `int_record_states` appended past the tenant's `records_batch_id` (its identities,
   and those of the live state it replaces: `prior_primary_id`, `prior_related_ids`), and the
   identity and canonical identity of every change feed row of `identity_map` after its
   `identity_map_version` (before images included);
2. affected identities A: T and every identity of a stored profile holding one of T
   (checkpointed: it is used three times);
3. the links with an endpoint in A, from the live records whose canonical primary_id is in A
   (no link leaves A, so a record has all its links in A or none), resolved by
   :func:`profile_lake.spark.identity_graph.resolve_components` (fast or distributed path);
4. output: every identity of A still linked, with its profile_id and the run's stamps, and the
   stored identities of A no longer linked, flagged for deletion. Rows outside A are left as
   they are, stamps included.

A tenant is resolved whole, which restamps its rows, when it has no watermarks (new, or built
before), when `records` does not show every version past its watermark (a run stopped before
the `records` MERGE: :func:`profile_lake.identity.watermarks.reads_increment`), or when its
changes to `identity_map` since its watermark can no longer be read from that table's change
feed (:func:`profile_lake.change_feed.change_feed_readable`: the first version to read is gone
from the history, or older than Delta's deleted-file retention). Maintenance commits (OPTIMIZE,
VACUUM) are skipped, so a lake with nothing but maintenance for a week reads on. Nothing
changed: A is empty and the output has no rows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from pyspark.sql import DataFrame, Row, SparkSession, Window
from pyspark.sql import functions as F

from profile_lake.change_feed import (
    Commit,
    change_feed_readable,
    first_change_after,
)
from profile_lake.identity.rules import TenantRules
from profile_lake.identity.watermarks import (
    TenantVersions,
    batch_stamp,
    check_bound,
    reads_increment,
)
from profile_lake.spark.delta_history import (
    change_feed_enabled,
    commit_history,
    latest_version,
    oldest_readable_commit_time,
    table_properties,
)
from profile_lake.spark.identity_graph import canonical_links
from profile_lake.spark.identity_linking import (
    CUT_LINK_TYPE,
    blocked_identities,
)

KEY = ["tenant_id", "identity_id"]
RECORD_KEY = ["tenant_id", "record_id"]
# the columns of a version of int_record_states that say what it changes
VERSION_COLUMNS = {
    "tenant_id": "string",
    "record_id": "string",
    "last_ingest_batch_id": "bigint",
    "is_deleted": "boolean",
    "primary_id": "string",
    "related_ids": "array<string>",
    "prior_is_live": "boolean",
    "prior_primary_id": "string",
    "prior_related_ids": "array<string>",
}
# pending versions up to this many are broadcast to the look-up of records' keys
BROADCAST_MAX_VERSIONS = 1_000_000

Resolve = Callable[[DataFrame], DataFrame]


class ChangeFeedMissing(RuntimeError):
    """An input table does not record its change data feed."""


def require_change_feed(spark: SparkSession, table: str) -> None:
    if not change_feed_enabled(table_properties(spark, table)):
        raise ChangeFeedMissing(
            f"{table} has no change data feed (built before it was turned on): rebuild it and "
            "int_profile_identities_resolved with --full-refresh"
        )


@dataclass(frozen=True)
class GraphSources:
    """`records`, `int_record_states` and `identity_map` as one run reads them: at the versions
    it stamps, for its tenants (None: every tenant), with the linking rules in force (tenants
    with none left out)."""

    records_table: str
    record_states_table: str
    identity_map_table: str
    records_version: int
    record_states_version: int
    identity_map_version: int
    tenants: tuple[str, ...] | None
    rules: Mapping[str, TenantRules] = field(default_factory=dict)

    @classmethod
    def latest(
        cls,
        spark: SparkSession,
        tables: tuple[str, str, str],
        tenants: tuple[str, ...] | None,
        rules: Mapping[str, TenantRules] | None = None,
    ) -> GraphSources:
        """`tables`: the names of `records`, `int_record_states` and `identity_map`."""
        records_table, record_states_table, identity_map_table = tables
        return cls(
            records_table,
            record_states_table,
            identity_map_table,
            latest_version(spark, records_table),
            latest_version(spark, record_states_table),
            latest_version(spark, identity_map_table),
            tenants,
            dict(rules or {}),
        )

    def fingerprint(self, tenant_id: str) -> str:
        """The digest of the tenant's rules stamped on its rows ("" for none)."""
        found = self.rules.get(tenant_id)
        return "" if found is None else found.fingerprint()

    def in_scope(self, frame: DataFrame) -> DataFrame:
        return (
            frame if self.tenants is None else frame.where(F.col("tenant_id").isin(*self.tenants))
        )

    def records(self, spark: SparkSession) -> DataFrame:
        return self.in_scope(
            spark.sql(
                "select tenant_id, record_id, primary_id, related_ids, event_ts "
                f"from {self.records_table} version as of {self.records_version}"
            )
        )

    def record_states(self, spark: SparkSession) -> DataFrame:
        """The versions' change columns (null for a column a table built before it lacks)."""
        states = spark.sql(
            f"select * from {self.record_states_table} version as of {self.record_states_version}"
        )
        return self.in_scope(
            states.select(
                *[
                    (F.col(name) if name in states.columns else F.lit(None)).cast(kind).alias(name)
                    for name, kind in VERSION_COLUMNS.items()
                ]
            )
        )

    def identity_map(self, spark: SparkSession) -> DataFrame:
        return self.in_scope(
            spark.sql(
                f"select tenant_id, identity_id, canonical_id from {self.identity_map_table} "
                f"version as of {self.identity_map_version}"
            )
        )

    def identity_map_feed(self, spark: SparkSession) -> FeedHistory:
        """The change feed of `identity_map`, read up to the run's version."""
        return FeedHistory.of(
            spark, self.identity_map_table, "identity_map_version", self.identity_map_version
        )

    def links(self, records: DataFrame, identity_map: DataFrame) -> DataFrame:
        """canonical_links, with their recency when some tenant has rules."""
        return canonical_links(records, identity_map, with_recency=bool(self.rules))

    def stamped(self, profiles: DataFrame, batch_stamps: Mapping[str, int | None]) -> DataFrame:
        """RESOLVED rows (tenant_id, identity_id, profile_id, component_id, cut_links) with the
        run's watermarks (`batch_stamps`: each tenant's records_batch_id) and the digest of the
        rules they were resolved under."""
        fingerprints = {tenant: self.fingerprint(tenant) for tenant in self.rules}
        return profiles.select(
            *KEY,
            "profile_id",
            "component_id",
            "cut_links",
            F.lit(self.records_version).cast("bigint").alias("records_version"),
            F.lit(self.identity_map_version).cast("bigint").alias("identity_map_version"),
            F.coalesce(tenant_lookup(fingerprints, "string"), F.lit("")).alias("rules_fingerprint"),
            tenant_lookup(batch_stamps, "bigint").alias("records_batch_id"),
        )

    def tenant_versions(
        self, spark: SparkSession, graph_watermarks: Mapping[str, int | None]
    ) -> tuple[dict[str, TenantVersions], DataFrame]:
        """What the run knows of each tenant of `int_record_states` (in scope), and the pending
        versions: each tenant's past its check_bound (checkpointed: read twice)."""
        states = self.record_states(spark)
        newest = {
            row["tenant_id"]: row["newest_batch"]
            for row in states.groupBy("tenant_id")
            .agg(F.max("last_ingest_batch_id").alias("newest_batch"))
            .collect()
        }
        tenants = sorted(newest.keys() | graph_watermarks.keys())
        # records' own watermark: needed only for tenants the graph has no watermark of
        unstamped = [tenant for tenant in tenants if graph_watermarks.get(tenant) is None]
        records_watermarks = (
            {
                row["tenant_id"]: row["records_watermark"]
                for row in spark.sql(
                    f"select tenant_id, ingest_batch_id from {self.records_table} "
                    f"version as of {self.records_version}"
                )
                .where(F.col("tenant_id").isin(*unstamped))
                .groupBy("tenant_id")
                .agg(F.max("ingest_batch_id").alias("records_watermark"))
                .collect()
            }
            if unstamped
            else {}
        )
        bounds = {
            tenant: check_bound(graph_watermarks.get(tenant), records_watermarks.get(tenant))
            for tenant in tenants
        }
        pending = (
            states.where(F.col("tenant_id").isin(*tenants))
            # a literal floor too: Delta skips the files of versions read before
            .where(F.col("last_ingest_batch_id") > min(bounds.values(), default=-1))
            .where(F.col("last_ingest_batch_id") > tenant_lookup(bounds, "bigint"))
            .localCheckpoint()
        )
        unshown = set(self._unshown_tenants(spark, pending))
        without_prior = {
            row["tenant_id"]
            for row in pending.where(F.col("prior_is_live").isNull())
            .select("tenant_id")
            .distinct()
            .collect()
        }
        versions = {
            tenant: TenantVersions(
                tenant,
                graph_watermarks.get(tenant),
                records_watermarks.get(tenant),
                newest.get(tenant),
                shown=tenant not in unshown,
                without_prior=tenant in without_prior,
            )
            for tenant in tenants
        }
        return versions, pending

    def _unshown_tenants(self, spark: SparkSession, pending: DataFrame) -> list[str]:
        """Tenants with a record whose newest pending version `records` does not show (a live
        version: its key with that batch; a deleted one: no key), reading its key columns."""
        newest = (
            pending.withColumn(
                "newest_batch",
                F.max("last_ingest_batch_id").over(Window.partitionBy(*RECORD_KEY)),
            )
            .where(F.col("last_ingest_batch_id") == F.col("newest_batch"))
            .select(*RECORD_KEY, "last_ingest_batch_id", "is_deleted")
        )
        keys = newest.select(*RECORD_KEY)
        if pending.count() <= BROADCAST_MAX_VERSIONS:
            keys = F.broadcast(keys)
        held = self.in_scope(
            spark.sql(
                f"select tenant_id, record_id, ingest_batch_id from {self.records_table} "
                f"version as of {self.records_version}"
            )
        ).join(keys, RECORD_KEY, "left_semi")
        return [
            row["tenant_id"]
            for row in newest.join(held, RECORD_KEY, "left")
            .where(
                F.when(F.col("is_deleted"), F.col("ingest_batch_id").isNotNull()).otherwise(
                    F.coalesce("ingest_batch_id", F.lit(-1)) != F.col("last_ingest_batch_id")
                )
            )
            .select("tenant_id")
            .distinct()
            .collect()
        ]


def tenant_lookup(values: Mapping[str, object], kind: str) -> F.Column:
    """`values[tenant_id]` as a column of `kind` (null for a tenant not in it)."""
    known = {tenant: value for tenant, value in values.items() if value is not None}
    if not known:
        return F.lit(None).cast(kind)
    return F.create_map(
        *[part for tenant, value in known.items() for part in (F.lit(tenant), F.lit(value))]
    )[F.col("tenant_id")].cast(kind)


def resolve_everything(spark: SparkSession, sources: GraphSources, resolve: Resolve) -> DataFrame:
    """A first run (or a full refresh): every component of the run's tenants."""
    versions, _ = sources.tenant_versions(spark, {})
    return sources.stamped(
        resolve(sources.links(sources.records(spark), sources.identity_map(spark))),
        {tenant: batch_stamp(found) for tenant, found in versions.items()},
    )


@dataclass(frozen=True)
class FeedHistory:
    """A change feed's table as a run reads it: its commits and the oldest readable commit time."""

    table: str
    column: str
    last: int
    commits: list[Commit]
    oldest_readable: datetime

    @classmethod
    def of(cls, spark: SparkSession, table: str, column: str, last: int) -> FeedHistory:
        require_change_feed(spark, table)
        return cls(
            table,
            column,
            last,
            commit_history(spark, table),
            oldest_readable_commit_time(spark, table),
        )

    def readable(self, watermarks: Row) -> bool:
        """Whether the tenant's changes after its watermark can still be read."""
        watermark = watermarks[self.column]
        return (
            watermark is not None
            and watermark <= self.last
            and change_feed_readable(self.commits, watermark, self.oldest_readable)
        )

    def first_version(self, watermarks: list[Row]) -> int | None:
        """The first version that may hold changes after a tenant's watermark, up to `last`."""
        firsts = [first_change_after(self.commits, row[self.column]) for row in watermarks]
        versions = [c.version for c in firsts if c is not None and c.version <= self.last]
        return min(versions) if versions else None


def _change_feed(spark: SparkSession, feed: FeedHistory, watermarks: list[Row]) -> DataFrame | None:
    """Change feed rows of the feed's table after each tenant's watermark, up to its `last`
    (None when no tenant has a version to read)."""
    first = feed.first_version(watermarks)
    if first is None:
        return None
    column = feed.column
    changes = (
        spark.read.format("delta")
        .option("readChangeFeed", "true")
        .option("startingVersion", first)
        .option("endingVersion", feed.last)
        .table(feed.table)
        # literal tenants, so a partitioned table's other partitions are not read
        .where(F.col("tenant_id").isin(*[row["tenant_id"] for row in watermarks]))
    )
    tenant_watermarks = spark.createDataFrame(
        [(row["tenant_id"], row[column]) for row in watermarks],
        f"tenant_id string, {column} bigint",
    )
    return (
        changes.join(F.broadcast(tenant_watermarks), "tenant_id")
        .where(F.col("_commit_version") > F.col(column))
        .drop(column)
    )


def version_identities(versions: DataFrame) -> DataFrame:
    """(tenant_id, identity_id): every raw identity of the versions and of the live states
    they replace."""
    no_ids = F.array().cast("array<string>")
    return (
        versions.select(
            "tenant_id",
            F.explode(
                F.concat(
                    F.array("primary_id", "prior_primary_id"),
                    F.coalesce("related_ids", no_ids),
                    F.coalesce("prior_related_ids", no_ids),
                )
            ).alias("identity_id"),
        )
        .where(F.col("identity_id").isNotNull())
        .distinct()
    )


def touched_identities(
    spark: SparkSession,
    versions: DataFrame,
    map_feed: FeedHistory,
    watermarks: list[Row],
    identity_map: DataFrame,
) -> DataFrame:
    """T: (tenant_id, identity_id) of canonical identities whose components may have changed.
    `versions`: the tenants' record versions past their watermarks."""
    touched = (
        version_identities(versions)
        .join(identity_map, KEY, "left")
        .select("tenant_id", F.coalesce("canonical_id", "identity_id").alias("identity_id"))
    )
    map_changes = _change_feed(spark, map_feed, watermarks)
    if map_changes is not None:
        # before images too: a late rename can move an identity off a canonical identity
        # whose own row does not change (profile_lake.identity.increments)
        touched = touched.unionByName(
            map_changes.select(
                "tenant_id", F.explode(F.array("identity_id", "canonical_id")).alias("identity_id")
            )
        )
    return touched.distinct()


def affected_identities(touched: DataFrame, stored: DataFrame) -> DataFrame:
    """A: `touched` and every identity of a stored component holding one of them (a component
    is a profile for a tenant without rules; with rules, the plain component of its links that
    no blocked identity cuts, which holds the profiles its ordered pass made)."""
    stored = stored.select(*KEY, F.coalesce("component_id", "profile_id").alias("component_id"))
    components = (
        stored.join(touched, KEY, "left_semi").select("tenant_id", "component_id").distinct()
    )
    members = stored.join(components, ["tenant_id", "component_id"], "left_semi").select(*KEY)
    return touched.select(*KEY).unionByName(members).distinct()


def records_touching(
    affected: DataFrame, records: DataFrame, identity_map: DataFrame, tenants: list[str]
) -> DataFrame:
    """The records of `tenants` with any identity (primary or related) whose canonical identity
    is affected: a blocked link leaves its component, so its record may have only its related
    end in A."""
    scoped = records.where(F.col("tenant_id").isin(*tenants))
    raw = scoped.select(
        "tenant_id",
        "record_id",
        F.explode(
            F.array_union(
                F.array("primary_id"), F.coalesce("related_ids", F.array().cast("array<string>"))
            )
        ).alias("identity_id"),
    )
    hit = (
        raw.join(identity_map.select(*KEY, "canonical_id"), KEY, "left")
        .select(
            "tenant_id", "record_id", F.coalesce("canonical_id", "identity_id").alias("identity_id")
        )
        .join(affected, KEY, "left_semi")
        .select("tenant_id", "record_id")
        .distinct()
    )
    return scoped.join(hit, ["tenant_id", "record_id"], "left_semi")


def affected_links(
    affected: DataFrame,
    records: DataFrame,
    identity_map: DataFrame,
    with_recency: bool = False,
    any_end_tenants: list[str] | None = None,
) -> DataFrame:
    """The links with an endpoint in `affected`: those of the records whose canonical primary_id
    is in it (raw primary_ids: the affected identities without a row in identity_map, and every
    identity whose canonical identity is affected). For `any_end_tenants` (tenants with
    rules), the records with any identity in it, and links with either end in it."""
    renamed = identity_map.join(
        affected.withColumnRenamed("identity_id", "canonical_id"),
        ["tenant_id", "canonical_id"],
        "left_semi",
    ).select(*KEY)
    unmapped = affected.join(identity_map, KEY, "left_anti")
    primaries = renamed.unionByName(unmapped).withColumnRenamed("identity_id", "primary_id")
    linked = records.join(primaries.distinct(), ["tenant_id", "primary_id"], "left_semi")
    if not any_end_tenants:
        return canonical_links(linked, identity_map, with_recency).join(
            affected.withColumnRenamed("identity_id", "src"), ["tenant_id", "src"], "left_semi"
        )
    plain = linked.where(~F.col("tenant_id").isin(*any_end_tenants))
    plain_links = canonical_links(plain, identity_map, with_recency).join(
        affected.withColumnRenamed("identity_id", "src"), ["tenant_id", "src"], "left_semi"
    )
    touching = records_touching(affected, records, identity_map, any_end_tenants)
    ruled_links = canonical_links(touching, identity_map, with_recency)
    ends = (
        ruled_links.join(
            affected.withColumnRenamed("identity_id", "src"), ["tenant_id", "src"], "left_semi"
        )
        .unionByName(
            ruled_links.join(
                affected.withColumnRenamed("identity_id", "dst"), ["tenant_id", "dst"], "left_semi"
            )
        )
        .distinct()
    )
    return plain_links.unionByName(ends)


def with_rules_columns(stored: DataFrame) -> DataFrame:
    """The stored rows with the columns added since the table's first version (null on a table
    built before them: without rules, component and profile alike, nothing cut; without a
    batch watermark, the tenant is resolved whole)."""
    for column, kind in (
        ("component_id", "string"),
        ("cut_links", f"array<{CUT_LINK_TYPE}>"),
        ("rules_fingerprint", "string"),
        ("records_batch_id", "bigint"),
    ):
        if column not in stored.columns:
            stored = stored.withColumn(column, F.lit(None).cast(kind))
    return stored


def renames_of_blocked(
    spark: SparkSession,
    feed: FeedHistory,
    watermarks: list[Row],
    rules: Mapping[str, TenantRules],
) -> set[str]:
    """Tenants among `watermarks` with an identity_map change since their watermark that names
    a blocked identity (before or after): its links' other ends may lie outside every affected
    component (a blocked link joins none), so those tenants are resolved whole."""
    candidates = [row for row in watermarks if rules.get(row["tenant_id"], TenantRules()).blocked]
    changes = _change_feed(spark, feed, candidates) if candidates else None
    if changes is None:
        return set()
    named = changes.select(
        "tenant_id", F.explode(F.array("identity_id", "canonical_id")).alias("identity_id")
    ).distinct()
    found = blocked_identities(named, rules)
    return {row["tenant_id"] for row in found.select("tenant_id").distinct().collect()}


def resolve_changes(
    spark: SparkSession,
    sources: GraphSources,
    stored: DataFrame,
    resolve: Resolve,
    delete_flag: str = "_delete_row",
) -> DataFrame:
    """An incremental run's rows: those of the affected identities, deletions flagged. A tenant
    whose rules changed since its rows were resolved (their rules_fingerprint) is resolved
    whole."""
    stored = with_rules_columns(sources.in_scope(stored))
    fingerprint = F.coalesce("rules_fingerprint", F.lit(""))
    watermarks = (
        stored.groupBy("tenant_id")
        .agg(
            F.max("records_batch_id").alias("records_batch_id"),
            F.max("identity_map_version").alias("identity_map_version"),
            F.min(fingerprint).alias("oldest_fingerprint"),
            F.max(fingerprint).alias("newest_fingerprint"),
        )
        .collect()
    )
    versions, pending = sources.tenant_versions(
        spark, {row["tenant_id"]: row["records_batch_id"] for row in watermarks}
    )
    map_feed = sources.identity_map_feed(spark) if watermarks else None
    readable = [
        row
        for row in watermarks
        if map_feed is not None
        and row["tenant_id"] in versions
        and reads_increment(versions[row["tenant_id"]])
        and map_feed.readable(row)
        and row["oldest_fingerprint"]
        == row["newest_fingerprint"]
        == sources.fingerprint(row["tenant_id"])
    ]
    if map_feed is not None and readable and sources.rules:
        whole_tenants = renames_of_blocked(spark, map_feed, readable, sources.rules)
        readable = [row for row in readable if row["tenant_id"] not in whole_tenants]
    incremental_tenants = spark.createDataFrame(
        [(row["tenant_id"],) for row in readable], "tenant_id string"
    )
    # Read once: the plans below refer to both many times, and each reference to a Delta table
    # is a scan whose files Delta lists in a job of its own at planning (dozens of jobs a run).
    records = sources.records(spark).localCheckpoint()
    identity_map = sources.identity_map(spark).localCheckpoint()

    affected = spark.createDataFrame([], "tenant_id string, identity_id string")
    if map_feed is not None and readable:
        # the pending versions of an incremental tenant are those past its watermark
        increments = pending.join(F.broadcast(incremental_tenants), "tenant_id", "left_semi")
        touched = touched_identities(spark, increments, map_feed, readable, identity_map)
        affected = affected_identities(touched, stored).localCheckpoint()
    whole = records.join(F.broadcast(incremental_tenants), "tenant_id", "left_anti")
    ruled = [row["tenant_id"] for row in readable if row["tenant_id"] in sources.rules]
    links = affected_links(affected, records, identity_map, bool(sources.rules), ruled).unionByName(
        sources.links(whole, identity_map)
    )
    if sources.rules:
        # the plain and the ruled tenants' paths each read the links (several times): the
        # versions, change feed and joins behind them are computed once
        links = links.localCheckpoint()
    resolved = resolve(links)
    if ruled:
        resolved = resolved.localCheckpoint()  # read three times below
        # a blocked link's far end may lie outside A: its row is not this run's to rewrite
        resolved = (
            resolved.join(F.broadcast(incremental_tenants), "tenant_id", "left_anti")
            .unionByName(
                resolved.where(F.col("tenant_id").isin(*ruled)).join(affected, KEY, "left_semi")
            )
            .unionByName(
                resolved.where(~F.col("tenant_id").isin(*ruled)).join(
                    F.broadcast(incremental_tenants), "tenant_id", "left_semi"
                )
            )
        )
    recomputed = stored.join(affected, KEY, "left_semi").unionByName(
        stored.join(F.broadcast(incremental_tenants), "tenant_id", "left_anti")
    )
    unlinked = recomputed.join(resolved, KEY, "left_anti")
    stamps = {tenant: batch_stamp(found) for tenant, found in versions.items()}
    return (
        sources.stamped(resolved, stamps)
        .withColumn(delete_flag, F.lit(False))
        .unionByName(sources.stamped(unlinked, stamps).withColumn(delete_flag, F.lit(True)))
    )
