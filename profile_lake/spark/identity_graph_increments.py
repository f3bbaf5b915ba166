"""Incremental graph resolution: the Spark side of :mod:`profile_lake.identity.increments`.

A run reads `records` and `identity_map` at their latest versions and stamps those versions on
every row it writes (`records_version`, `identity_map_version`): a tenant's watermarks are the
largest stamps of its rows, so they move in the same commit as the rows. An incremental run,
for each tenant of its scope with watermarks:

1. touched identities T: the canonical identities (current map) of the raw identities of every
   change feed row of `records` after the tenant's `records_version` (inserts, deletes, before
   and after images of updates), and the identity and canonical identity of every change feed
   row of `identity_map` after its `identity_map_version` (before images included);
2. affected identities A: T and every identity of a stored profile holding one of T
   (checkpointed: it is used three times);
3. the links with an endpoint in A, from the live records whose canonical primary_id is in A
   (no link leaves A, so a record has all its links in A or none), resolved by
   :func:`profile_lake.spark.identity_graph.resolve_components` (fast or distributed path);
4. output: every identity of A still linked, with its profile_id and the run's stamps, and the
   stored identities of A no longer linked, flagged for deletion. Rows outside A are left as
   they are, stamps included.

A tenant without watermarks (new, or built before), or whose watermark is older than the
oldest version left in a table's history, is resolved whole. Nothing changed: A is empty and
the output has no rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from profile_lake.spark.identity_graph import canonical_links

KEY = ["tenant_id", "identity_id"]
RECORD_FEED_TYPES = ("insert", "update_preimage", "update_postimage", "delete")

Resolve = Callable[[DataFrame], DataFrame]


class ChangeFeedMissing(RuntimeError):
    """An input table does not record its change data feed."""


def latest_version(spark: SparkSession, table: str) -> int:
    return int(spark.sql(f"describe history {table} limit 1").first()["version"])


def oldest_version(spark: SparkSession, table: str) -> int:
    """The oldest version still in the table's history: its change feed starts there at best."""
    return int(spark.sql(f"describe history {table}").agg(F.min("version")).first()[0])


def require_change_feed(spark: SparkSession, table: str) -> None:
    properties = {
        row["key"]: row["value"] for row in spark.sql(f"show tblproperties {table}").collect()
    }
    if properties.get("delta.enableChangeDataFeed", "false").lower() != "true":
        raise ChangeFeedMissing(
            f"{table} has no change data feed (built before it was turned on): rebuild it and "
            "int_profile_identities_resolved with --full-refresh"
        )


@dataclass(frozen=True)
class GraphSources:
    """`records` and `identity_map` as one run reads them: at the versions it stamps, for its
    tenants (None: every tenant)."""

    records_table: str
    identity_map_table: str
    records_version: int
    identity_map_version: int
    tenants: tuple[str, ...] | None

    @classmethod
    def latest(
        cls,
        spark: SparkSession,
        records_table: str,
        identity_map_table: str,
        tenants: tuple[str, ...] | None,
    ) -> GraphSources:
        return cls(
            records_table,
            identity_map_table,
            latest_version(spark, records_table),
            latest_version(spark, identity_map_table),
            tenants,
        )

    def in_scope(self, frame: DataFrame) -> DataFrame:
        return (
            frame if self.tenants is None else frame.where(F.col("tenant_id").isin(*self.tenants))
        )

    def records(self, spark: SparkSession) -> DataFrame:
        return self.in_scope(
            spark.sql(
                f"select tenant_id, primary_id, related_ids from {self.records_table} "
                f"version as of {self.records_version}"
            )
        )

    def identity_map(self, spark: SparkSession) -> DataFrame:
        return self.in_scope(
            spark.sql(
                f"select tenant_id, identity_id, canonical_id from {self.identity_map_table} "
                f"version as of {self.identity_map_version}"
            )
        )

    def stamped(self, profiles: DataFrame) -> DataFrame:
        """(tenant_id, identity_id, profile_id) rows with the run's watermarks."""
        return profiles.select(
            *KEY,
            "profile_id",
            F.lit(self.records_version).cast("bigint").alias("records_version"),
            F.lit(self.identity_map_version).cast("bigint").alias("identity_map_version"),
        )


def resolve_everything(spark: SparkSession, sources: GraphSources, resolve: Resolve) -> DataFrame:
    """A first run (or a full refresh): every component of the run's tenants."""
    return sources.stamped(
        resolve(canonical_links(sources.records(spark), sources.identity_map(spark)))
    )


def readable_watermarks(
    spark: SparkSession, sources: GraphSources, watermarks: list[Row]
) -> list[Row]:
    """The tenants' watermarks from which both change feeds can still be read."""
    if not watermarks:
        return []
    for table in (sources.records_table, sources.identity_map_table):
        require_change_feed(spark, table)
    records_from = oldest_version(spark, sources.records_table)
    identity_map_from = oldest_version(spark, sources.identity_map_table)
    return [
        row
        for row in watermarks
        if row["records_version"] is not None
        and row["identity_map_version"] is not None
        and records_from <= row["records_version"] + 1 <= sources.records_version + 1
        and identity_map_from <= row["identity_map_version"] + 1 <= sources.identity_map_version + 1
    ]


def _change_feed(
    spark: SparkSession, table: str, watermarks: list[Row], column: str, last: int
) -> DataFrame | None:
    """Change feed rows of `table` after each tenant's watermark in `column`, up to `last`
    (None when no tenant has a version to read)."""
    first = min(row[column] for row in watermarks) + 1
    if first > last:
        return None
    feed = (
        spark.read.format("delta")
        .option("readChangeFeed", "true")
        .option("startingVersion", first)
        .option("endingVersion", last)
        .table(table)
        # literal tenants, so a partitioned table's other partitions are not read
        .where(F.col("tenant_id").isin(*[row["tenant_id"] for row in watermarks]))
    )
    tenant_watermarks = spark.createDataFrame(
        [(row["tenant_id"], row[column]) for row in watermarks],
        f"tenant_id string, {column} bigint",
    )
    return (
        feed.join(F.broadcast(tenant_watermarks), "tenant_id")
        .where(F.col("_commit_version") > F.col(column))
        .drop(column)
    )


def touched_identities(
    spark: SparkSession, sources: GraphSources, watermarks: list[Row], identity_map: DataFrame
) -> DataFrame:
    """T: (tenant_id, identity_id) of canonical identities whose components may have changed."""
    touched = spark.createDataFrame([], "tenant_id string, identity_id string")
    records_feed = _change_feed(
        spark, sources.records_table, watermarks, "records_version", sources.records_version
    )
    if records_feed is not None:
        raw = records_feed.where(F.col("_change_type").isin(*RECORD_FEED_TYPES)).select(
            "tenant_id",
            F.explode(
                F.array_union(
                    F.array("primary_id"),
                    F.coalesce("related_ids", F.array().cast("array<string>")),
                )
            ).alias("identity_id"),
        )
        touched = touched.unionByName(
            raw.distinct()
            .join(identity_map, KEY, "left")
            .select("tenant_id", F.coalesce("canonical_id", "identity_id").alias("identity_id"))
        )
    map_feed = _change_feed(
        spark,
        sources.identity_map_table,
        watermarks,
        "identity_map_version",
        sources.identity_map_version,
    )
    if map_feed is not None:
        # before images too: a late rename can move an identity off a canonical identity
        # whose own row does not change (profile_lake.identity.increments)
        touched = touched.unionByName(
            map_feed.select(
                "tenant_id", F.explode(F.array("identity_id", "canonical_id")).alias("identity_id")
            )
        )
    return touched.distinct()


def affected_identities(touched: DataFrame, stored: DataFrame) -> DataFrame:
    """A: `touched` and every identity of a stored profile holding one of them."""
    profiles = stored.join(touched, KEY, "left_semi").select("tenant_id", "profile_id").distinct()
    members = stored.join(profiles, ["tenant_id", "profile_id"], "left_semi").select(*KEY)
    return touched.select(*KEY).unionByName(members).distinct()


def affected_links(affected: DataFrame, records: DataFrame, identity_map: DataFrame) -> DataFrame:
    """The links with an endpoint in `affected`: those of the records whose canonical primary_id
    is in it (raw primary_ids: the affected identities without a row in identity_map, and every
    identity whose canonical identity is affected)."""
    renamed = identity_map.join(
        affected.withColumnRenamed("identity_id", "canonical_id"),
        ["tenant_id", "canonical_id"],
        "left_semi",
    ).select(*KEY)
    unmapped = affected.join(identity_map, KEY, "left_anti")
    primaries = renamed.unionByName(unmapped).withColumnRenamed("identity_id", "primary_id")
    linked = records.join(primaries.distinct(), ["tenant_id", "primary_id"], "left_semi")
    return canonical_links(linked, identity_map).join(
        affected.withColumnRenamed("identity_id", "src"), ["tenant_id", "src"], "left_semi"
    )


def resolve_changes(
    spark: SparkSession,
    sources: GraphSources,
    stored: DataFrame,
    resolve: Resolve,
    delete_flag: str = "_delete_row",
) -> DataFrame:
    """An incremental run's rows: those of the affected identities, deletions flagged."""
    stored = sources.in_scope(stored)
    watermarks = (
        stored.groupBy("tenant_id")
        .agg(
            F.max("records_version").alias("records_version"),
            F.max("identity_map_version").alias("identity_map_version"),
        )
        .collect()
    )
    readable = readable_watermarks(spark, sources, watermarks)
    incremental_tenants = spark.createDataFrame(
        [(row["tenant_id"],) for row in readable], "tenant_id string"
    )
    records, identity_map = sources.records(spark), sources.identity_map(spark)

    affected = spark.createDataFrame([], "tenant_id string, identity_id string")
    if readable:
        touched = touched_identities(spark, sources, readable, identity_map)
        affected = affected_identities(touched, stored).localCheckpoint()
    whole = records.join(F.broadcast(incremental_tenants), "tenant_id", "left_anti")
    links = affected_links(affected, records, identity_map).unionByName(
        canonical_links(whole, identity_map)
    )
    resolved = resolve(links)
    recomputed = stored.join(affected, KEY, "left_semi").unionByName(
        stored.join(F.broadcast(incremental_tenants), "tenant_id", "left_anti")
    )
    unlinked = recomputed.join(resolved, KEY, "left_anti")
    return (
        sources.stamped(resolved)
        .withColumn(delete_flag, F.lit(False))
        .unionByName(sources.stamped(unlinked).withColumn(delete_flag, F.lit(True)))
    )
