"""Connected components of the identity graph per tenant: the Spark side of profile resolution.

Links come from live records: the canonical primary_id to each canonical related id (a record
without related ids, or linking an identity to itself, still makes its primary identity a node).
Every tenant is resolved on its own; all keys carry tenant_id, so nothing crosses tenants.

Two paths, both giving every canonical identity the smallest identity of its component:

* fast path, for tenants with at most `fast_path_max_links` links: the tenant's links are one
  pandas group and the vectorized union-find of :mod:`profile_lake.identity.contraction`
  resolves them in one Python worker (``applyInPandas``); tenants run in parallel;
* distributed path, for bigger tenants: passes of local contraction
  (:mod:`profile_lake.identity.contraction`). A pass spreads a tenant's links over buckets of
  at most `bucket_max_links`, resolves each bucket in one Python worker (a vectorized
  union-find), peels the identities seen in one bucket only, and keeps a link from each
  boundary identity to each of its local roots; the next pass buckets that smaller graph by
  its other end. No tenant's graph has to fit in one process, only a bucket. A component that
  fits one bucket is done in the first pass, so later passes see a small graph. Should a pass
  find little locality, the rest goes to the alternating large-star / small-star rounds of
  :mod:`profile_lake.identity.graph`, step for step as DataFrame group-bys and joins.
  Every pass and round is written to a checkpoint folder and read back, which cuts the
  lineage (plans stay one pass deep).

The rounds run on numbers, not strings: the identities are first numbered in
``(tenant_id, identity_id)`` order by a distributed sort, so within a tenant the smaller number
is the smaller identity, and numbers never collide across tenants, so the rounds need no tenant
column. The rounds stop once the pairs form stars around their minima: every ``hi`` in exactly
one pair and no ``lo`` is a ``hi`` (a fixed point of both steps, so the labels are final).
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from profile_lake.identity.contraction import STALL_RATIO, local_roots

COMPONENTS_SCHEMA = "tenant_id string, identity_id string, profile_id string"
LOCAL_ROOTS_SCHEMA = "tenant_id string, identity_id string, root string"
DEFAULT_FAST_PATH_MAX_LINKS = 1_000_000
# a bucket of the distributed path is resolved in one Python worker, as the fast path's
# tenant is: the same limit holds
DEFAULT_BUCKET_MAX_LINKS = DEFAULT_FAST_PATH_MAX_LINKS
MAX_CONTRACTION_PASSES = 32
MAX_ROUNDS = 200


def canonical_links(
    records: DataFrame, identity_map: DataFrame, with_recency: bool = False
) -> DataFrame:
    """(tenant_id, src, dst) canonical links of live records; src = dst for a lone identity.

    `records`: live records (tenant_id, primary_id, related_ids, and with_recency event_ts and
    record_id). `identity_map`: tenant_id, identity_id, canonical_id (identities missing from
    it are their own canonical identity). With `with_recency`, each link also carries its
    recency (SPEC §5): the largest (event_ts, record_id) of the records giving it.
    """
    carried = ["event_ts", "record_id"] if with_recency else []
    raw = records.select(
        "tenant_id",
        *carried,
        F.col("primary_id").alias("raw_src"),
        F.explode(
            F.array_union(
                F.array("primary_id"),
                F.coalesce("related_ids", F.array().cast("array<string>")),
            )
        ).alias("raw_dst"),
    ).distinct()
    mapping = identity_map.select("tenant_id", "identity_id", "canonical_id")

    def canonical(column: str, alias: str) -> tuple[DataFrame, F.Column]:
        side = mapping.select(
            "tenant_id",
            F.col("identity_id").alias(column),
            F.col("canonical_id").alias(alias),
        )
        return side, F.coalesce(alias, column)

    src_map, src = canonical("raw_src", "src_canonical")
    dst_map, dst = canonical("raw_dst", "dst_canonical")
    links = (
        raw.join(src_map, ["tenant_id", "raw_src"], "left")
        .join(dst_map, ["tenant_id", "raw_dst"], "left")
        .select("tenant_id", src.alias("src"), dst.alias("dst"), *carried)
    )
    if not with_recency:
        return links.distinct()
    return (
        links.groupBy("tenant_id", "src", "dst")
        .agg(F.max(F.struct("event_ts", "record_id")).alias("recency"))
        .select("tenant_id", "src", "dst", "recency.event_ts", "recency.record_id")
    )


def _union_find_group(frame: pd.DataFrame) -> pd.DataFrame:
    """One tenant's components in one Python worker, by the vectorized union-find (a link of
    an identity to itself makes it a node)."""
    identities, roots = local_roots(frame["src"].to_numpy(), frame["dst"].to_numpy())
    return pd.DataFrame(
        {"tenant_id": frame["tenant_id"].iat[0], "identity_id": identities, "profile_id": roots}
    )


def components_fast_path(links: DataFrame) -> DataFrame:
    """Union-find per tenant, one tenant per pandas group."""
    return links.groupBy("tenant_id").applyInPandas(_union_find_group, COMPONENTS_SCHEMA)


Checkpoint = Callable[[DataFrame, str], DataFrame]


def parquet_checkpoint(folder: Path) -> Checkpoint:
    """Write a DataFrame under `folder` and read it back: the plan restarts from the files."""

    def checkpoint(frame: DataFrame, name: str) -> DataFrame:
        path = str(folder / name)
        frame.write.mode("overwrite").parquet(path)
        return frame.sparkSession.read.parquet(path)

    return checkpoint


def _smallest_neighbours(pairs: DataFrame) -> DataFrame:
    """m(u) for every node with a smaller neighbour: (hi, m)."""
    return pairs.groupBy("hi").agg(F.min("lo").alias("m"))


def large_star(pairs: DataFrame) -> DataFrame:
    """(hi, lo) -> (hi, m(lo)); see profile_lake.identity.graph.large_star."""
    smallest = _smallest_neighbours(pairs).withColumnRenamed("hi", "lo")
    return (
        pairs.join(smallest, "lo", "left")
        .select("hi", F.coalesce("m", "lo").alias("lo"))
        .distinct()
    )


def small_star(pairs: DataFrame) -> DataFrame:
    """(hi, lo) -> (lo, m(hi)) unless equal, plus (hi, m(hi)); see graph.small_star."""
    smallest = _smallest_neighbours(pairs)
    linked = (
        pairs.join(smallest, "hi")
        .select(F.col("lo").alias("hi"), F.col("m").alias("lo"))
        .where(F.col("hi") != F.col("lo"))
    )
    return linked.unionByName(smallest.select("hi", F.col("m").alias("lo"))).distinct()


def is_star_forest(pairs: DataFrame) -> bool:
    """Every hi in exactly one pair and no lo is a hi: each component a star on its minimum."""
    if pairs.groupBy("hi").count().where("count > 1").limit(1).count() > 0:
        return False
    centres = pairs.select(F.col("hi").alias("lo"))
    return pairs.join(centres, "lo", "left_semi").limit(1).count() == 0


def number_identities(links: DataFrame) -> DataFrame:
    """(tenant_id, identity_id, node): every identity of `links` numbered in
    (tenant_id, identity_id) order. A global sort range-partitions the identities, and
    monotonically_increasing_id grows with the partition index and the row within it, so
    the numbers keep the sort order without gathering the identities in one task."""
    identities = (
        links.select("tenant_id", F.col("src").alias("identity_id"))
        .unionByName(links.select("tenant_id", F.col("dst").alias("identity_id")))
        .distinct()
    )
    return identities.orderBy("tenant_id", "identity_id").withColumn(
        "node", F.monotonically_increasing_id()
    )


def components_large_small_star(
    links: DataFrame, checkpoint: Checkpoint, max_rounds: int = MAX_ROUNDS
) -> DataFrame:
    """Alternating large-star / small-star rounds over DataFrames of numbered identities."""
    # links are read three times (the sort's sample, the numbering, the numbered pairs):
    # computed once. The numbering must not be recomputed either: its numbers depend on the
    # partitioning.
    links = checkpoint(links.select("tenant_id", "src", "dst"), "links")
    numbered = checkpoint(number_identities(links), "identities")

    def node_of(column: str) -> DataFrame:
        return numbered.select(
            "tenant_id", F.col("identity_id").alias(column), F.col("node").alias(f"{column}_node")
        )

    numbered_links = links.join(node_of("src"), ["tenant_id", "src"]).join(
        node_of("dst"), ["tenant_id", "dst"]
    )
    pairs = checkpoint(
        numbered_links.where(F.col("src_node") != F.col("dst_node"))
        .select(
            F.greatest("src_node", "dst_node").alias("hi"),
            F.least("src_node", "dst_node").alias("lo"),
        )
        .distinct(),
        "round-0",
    )
    for round_number in range(1, max_rounds + 1):
        if is_star_forest(pairs):
            break
        pairs = checkpoint(small_star(large_star(pairs)), f"round-{round_number}")
    else:
        raise RuntimeError(f"large/small-star did not converge in {max_rounds} rounds")
    centres = numbered.select(F.col("node").alias("lo"), F.col("identity_id").alias("profile_id"))
    labels = pairs.join(centres, "lo").select(F.col("hi").alias("node"), "profile_id")
    return numbered.join(labels, "node", "left").select(
        "tenant_id", "identity_id", F.coalesce("profile_id", "identity_id").alias("profile_id")
    )


def _local_roots_group(frame: pd.DataFrame) -> pd.DataFrame:
    identities, roots = local_roots(frame["src"].to_numpy(), frame["dst"].to_numpy())
    return pd.DataFrame(
        {
            "tenant_id": frame["tenant_id"].iloc[0],
            "identity_id": identities,
            "root": roots,
        }
    )


def _link_counts(links: DataFrame) -> dict[str, int]:
    """tenant -> its links (tenants without any are left out)."""
    return {row["tenant_id"]: row["count"] for row in links.groupBy("tenant_id").count().collect()}


def contraction_pass(
    links: DataFrame, buckets: dict[str, int], pass_number: int, checkpoint: Checkpoint
) -> tuple[DataFrame, DataFrame]:
    """One pass of :func:`profile_lake.identity.contraction.contract` over `links` (tenant_id,
    src, dst) in `buckets` per tenant: (every identity of `links` once, with `key`: its local
    root if it is peeled, else itself; the next graph's links).

    A link's bucket is a hash of its larger end on even passes and of its smaller end on odd
    ones: the next graph links each boundary identity to roots smaller than it, so the next
    pass gathers an identity's links to its roots in one bucket, and the one after gathers the
    links into each root."""
    end = F.greatest if pass_number % 2 == 0 else F.least
    count_of = F.create_map(*(F.lit(value) for item in buckets.items() for value in item))
    bucketed = links.select(
        "tenant_id",
        "src",
        "dst",
        F.pmod(
            F.xxhash64(end("src", "dst"), F.lit(pass_number)), count_of[F.col("tenant_id")]
        ).alias("bucket"),
    )
    roots = checkpoint(
        bucketed.groupBy("tenant_id", "bucket")
        .applyInPandas(_local_roots_group, LOCAL_ROOTS_SCHEMA)
        .groupBy("tenant_id", "identity_id")
        .agg(F.collect_list("root").alias("roots")),
        f"contraction-{pass_number}",
    )
    keyed = roots.select(
        "tenant_id",
        "identity_id",
        F.when(F.size("roots") == 1, F.col("roots")[0])
        .otherwise(F.col("identity_id"))
        .alias("key"),
    )
    next_links = (
        roots.where(F.size("roots") > 1)
        .select("tenant_id", F.col("identity_id").alias("src"), F.explode("roots").alias("dst"))
        .where(F.col("src") != F.col("dst"))
    )
    return keyed, next_links


def unwind(labels: DataFrame | None, layers: list[DataFrame], checkpoint: Checkpoint) -> DataFrame:
    """:func:`profile_lake.identity.contraction.unwind` on DataFrames, deepest pass first:
    every identity of a pass takes its key's label in the next graph (`labels`), or the key
    itself (a root that left the graph on its own, or was its smallest identity)."""
    for depth, keyed in reversed(list(enumerate(layers))):
        if labels is None:
            labels = keyed.select("tenant_id", "identity_id", F.col("key").alias("profile_id"))
        else:
            key_labels = labels.select("tenant_id", F.col("identity_id").alias("key"), "profile_id")
            labels = keyed.join(key_labels, ["tenant_id", "key"], "left").select(
                "tenant_id", "identity_id", F.coalesce("profile_id", "key").alias("profile_id")
            )
        if depth:  # the first pass's labels are the answer, read once
            labels = checkpoint(labels, f"unwound-{depth}")
    assert labels is not None
    return labels


def components_contracted(
    links: DataFrame,
    counts: dict[str, int],
    checkpoint: Checkpoint,
    bucket_max_links: int = DEFAULT_BUCKET_MAX_LINKS,
    max_passes: int = MAX_CONTRACTION_PASSES,
) -> DataFrame:
    """identity -> profile_id for every identity of `links` (tenant_id, src, dst; `counts`
    links per tenant), by passes of local contraction; what a pass without locality leaves
    goes to the large-star / small-star rounds."""
    current = links
    layers: list[DataFrame] = []
    for pass_number in range(max_passes):
        if not counts:
            break
        buckets = {tenant: -(-count // bucket_max_links) for tenant, count in counts.items()}
        keyed, current = contraction_pass(current, buckets, pass_number, checkpoint)
        layers.append(keyed)
        previous, counts = sum(counts.values()), _link_counts(current)
        if sum(counts.values()) > STALL_RATIO * previous:
            break
    rest = components_large_small_star(current, checkpoint) if counts else None
    return unwind(rest, layers, checkpoint)


def fresh_checkpoint_folder(root: Path) -> Path:
    """A new folder for this run's checkpoints under `root`; older runs' folders are removed
    (their DataFrames were written to tables by the runs that made them)."""
    if root.exists():
        for old in root.iterdir():
            shutil.rmtree(old, ignore_errors=True)
    folder = root / f"run-{uuid.uuid4().hex}"
    folder.mkdir(parents=True)
    return folder


def resolve_components(
    links: DataFrame,
    checkpoint_root: Path,
    fast_path_max_links: int = DEFAULT_FAST_PATH_MAX_LINKS,
    bucket_max_links: int = DEFAULT_BUCKET_MAX_LINKS,
    max_contraction_passes: int = MAX_CONTRACTION_PASSES,
) -> DataFrame:
    """identity -> profile_id for every canonical identity in `links`, per tenant: tenants of
    at most `fast_path_max_links` links by the fast path, the others by the distributed one."""
    spark: SparkSession = links.sparkSession
    links = links.select("tenant_id", "src", "dst")
    sizes = _link_counts(links)
    small = [tenant for tenant, count in sizes.items() if count <= fast_path_max_links]
    large = {tenant: count for tenant, count in sizes.items() if count > fast_path_max_links}
    parts: list[DataFrame] = []
    if small:
        parts.append(components_fast_path(links.where(F.col("tenant_id").isin(small))))
    if large:
        checkpoint = parquet_checkpoint(fresh_checkpoint_folder(checkpoint_root))
        parts.append(
            components_contracted(
                links.where(F.col("tenant_id").isin(*large)),
                large,
                checkpoint,
                bucket_max_links,
                max_contraction_passes,
            )
        )
    if not parts:
        return spark.createDataFrame([], COMPONENTS_SCHEMA)
    result = parts[0]
    for part in parts[1:]:
        result = result.unionByName(part)
    return result
