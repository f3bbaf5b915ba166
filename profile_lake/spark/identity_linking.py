"""Profiles under linking rules per tenant: the Spark side of :mod:`profile_lake.identity.linking`.

Tenants without rules take the plain path of :mod:`profile_lake.spark.identity_graph`
unchanged (their profile is their component). For a tenant with rules, step for step as
:func:`profile_lake.identity.linking.resolve_by_components`:

1. the tenant's links, one row per unordered pair with its recency (the largest
   `(event_ts, record_id)` of the live records carrying it), and its nodes;
2. blocked identities: the link ends matching a `blocked` pattern (SQL LIKE, an expression
   per link, no join); links with a blocked end are cut (`blocked`);
3. a tenant whose other links fit one worker (the fast path's limit) is resolved whole in one
   pandas call (:func:`profile_lake.identity.linking.resolve_open_arrays`): plain components,
   pressure, and the ordered pass over the pressured components only;
4. a bigger tenant takes the same steps as DataFrame operations, so no tenant graph has to fit
   in one process: plain components by the distributed path; pressure, each component's size
   and namespace counts against the tenant's limits (group-bys; a component within every limit
   keeps all its links, so its profile is the component); and the ordered pass
   (:func:`profile_lake.identity.linking.ordered_union`) over the components that break a
   limit, in a few buckets per tenant (one pandas call each, many components): their links
   ranked newest first, and the links it cuts with their rule.

Output, one row per node: tenant_id, identity_id, profile_id, component_id (step 3's, which
the incremental runs take the affected identities by), and cut_links: the cut links this
identity is the home of (the smaller end; for a blocked link, its end that is not blocked, if
any), each as `struct<other_id, rule, namespace, event_ts, record_id>`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from functools import reduce
from pathlib import Path

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from profile_lake.identity.linking import (
    BLOCKED,
    CutLink,
    Limits,
    Link,
    ordered_union,
    rank_links,
    resolve_open_arrays,
)
from profile_lake.identity.rules import TenantRules
from profile_lake.spark.identity_graph import DEFAULT_FAST_PATH_MAX_LINKS, resolve_components

CUT_LINK_TYPE = (
    "struct<other_id:string,rule:string,namespace:string,event_ts:timestamp,record_id:string>"
)
RESOLVED_COLUMNS = ["tenant_id", "identity_id", "profile_id", "component_id", "cut_links"]
PASS_SCHEMA = (
    "tenant_id string, kind string, identity_id string, "
    "profile_id string, other_id string, rule string, namespace string, "
    "event_micros bigint, record_id string"
)
TENANT_CALL_SCHEMA = f"{PASS_SCHEMA}, component_id string"
# The most links a pressured component may have: its ordered pass runs in one Python worker
# (bench_identity_linking_rules: a 1M-link component takes 8 s and 645 MiB there).
DEFAULT_PRESSURED_MAX_LINKS = 2_000_000
# PASS_SCHEMA's columns that only a cut row fills
PASS_EXTRA_COLUMNS = (
    ("other_id", "string"),
    ("rule", "string"),
    ("namespace", "string"),
    ("event_micros", "bigint"),
    ("record_id", "string"),
)


def _no_cut_links() -> F.Column:
    return F.array().cast(f"array<{CUT_LINK_TYPE}>")


def is_blocked(identity: F.Column, rules: Mapping[str, TenantRules]) -> F.Column:
    """Whether `identity`, of the row's tenant (its tenant_id), matches one of that tenant's
    blocked patterns (SQL LIKE). An expression per row, not a join: Spark turns a pattern
    without wildcards into an equality and a trailing `%` into a prefix test, so no identity
    is shuffled or compared with every pattern."""
    matched = F.lit(False)
    for tenant, found in sorted(rules.items()):
        if found.blocked:
            any_pattern = reduce(
                operator.or_, (identity.like(pattern) for pattern in found.blocked)
            )
            matched = F.when(F.col("tenant_id") == tenant, any_pattern).otherwise(matched)
    return matched


def blocked_identities(identities: DataFrame, rules: Mapping[str, TenantRules]) -> DataFrame:
    """(tenant_id, identity_id) of the identities matching a blocked pattern of their tenant."""
    return (
        identities.where(is_blocked(F.col("identity_id"), rules))
        .select("tenant_id", "identity_id")
        .distinct()
    )


def _limits(rules: TenantRules) -> Limits:
    return Limits(rules.max_identities, dict(rules.namespace_limits))


def pressured_components(components: DataFrame, rules: Mapping[str, TenantRules]) -> DataFrame:
    """(tenant_id, component_id) of the components that, joined whole, break a limit."""
    spark = components.sparkSession
    maxima = spark.createDataFrame(
        [(t, r.max_identities) for t, r in rules.items() if r.max_identities is not None],
        "tenant_id string, max_identities bigint",
    )
    namespace_limits = spark.createDataFrame(
        [(t, ns, limit) for t, r in rules.items() for ns, limit in r.namespace_limits.items()],
        "tenant_id string, namespace string, namespace_limit bigint",
    )
    keys = ["tenant_id", "component_id"]
    over_size = (
        components.groupBy(*keys)
        .count()
        .join(F.broadcast(maxima), "tenant_id")
        .where(F.col("count") > F.col("max_identities"))
        .select(*keys)
    )
    over_namespace = (
        components.withColumn("namespace", F.substring_index("identity_id", ":", 1))
        .join(F.broadcast(namespace_limits), ["tenant_id", "namespace"])
        .groupBy(*keys, "namespace", "namespace_limit")
        .count()
        .where(F.col("count") > F.col("namespace_limit"))
        .select(*keys)
    )
    return over_size.unionByName(over_namespace).distinct()


def ordered_pass_bucket(frame: pd.DataFrame, limits: Mapping[str, Limits]) -> pd.DataFrame:
    """One pandas call per bucket: the links of whole components of one tenant, one pass over
    all of them (components are disjoint, so it equals a pass per component)."""
    tenant_id = frame["tenant_id"].iat[0]
    links = [
        Link(*values)
        for values in zip(
            frame["smaller"].tolist(),
            frame["larger"].tolist(),
            frame["event_micros"].tolist(),
            frame["record_id"].tolist(),
            strict=True,
        )
    ]
    found = ordered_union((), rank_links(links), limits[tenant_id])
    return _resolution_rows(
        tenant_id, list(found.profiles), list(found.profiles.values()), found.cut
    )


def _resolution_rows(
    tenant_id: str,
    identities: Sequence[str],
    profiles: Sequence[str],
    cut: Sequence[CutLink],
    components: Sequence[str] | None = None,
) -> pd.DataFrame:
    """PASS_SCHEMA rows (with `components`, TENANT_CALL_SCHEMA rows): one per identity with its
    profile, one per cut link (identity_id its smaller end). Built from object arrays: a
    tenant's call returns a row per identity, and pandas copies arrays faster than lists."""

    def column(for_identities: Sequence[object] | None, for_cuts: list[object]) -> np.ndarray:
        head = (
            np.full(len(identities), None, dtype=object)
            if for_identities is None
            else np.asarray(for_identities, dtype=object)
        )
        return np.concatenate([head, np.asarray(for_cuts, dtype=object)])

    none_per_cut: list[object] = [None] * len(cut)
    columns = {
        "kind": column(["identity"] * len(identities), ["cut"] * len(cut)),
        "identity_id": column(identities, [item.link.smaller for item in cut]),
        "profile_id": column(profiles, none_per_cut),
        "other_id": column(None, [item.link.larger for item in cut]),
        "rule": column(None, [item.rule for item in cut]),
        "namespace": column(None, [item.namespace for item in cut]),
        "event_micros": column(None, [int(item.link.event_ts) for item in cut]),
        "record_id": column(None, [item.link.record_id for item in cut]),
    }
    if components is not None:
        columns["component_id"] = column(components, none_per_cut)
    return pd.DataFrame({"tenant_id": tenant_id, **columns}).astype({"event_micros": "Int64"})


def tenant_call(frame: pd.DataFrame, limits: Mapping[str, Limits]) -> pd.DataFrame:
    """One pandas call per tenant (_tenant_rows): its links and lone identities resolved whole:
    blocked links left out, plain components of the others, pressure, the ordered pass. Every
    identity of the tenant gets a row, a blocked one a component of its own."""
    tenant_id = frame["tenant_id"].iat[0]
    is_open = ~frame["blocked"] & (frame["smaller"] != frame["larger"])
    open_links, others = frame[is_open], frame[~is_open]
    found = resolve_open_arrays(
        np.concatenate([others["smaller"].to_numpy(), others["larger"].to_numpy()]),
        open_links["smaller"].to_numpy(),
        open_links["larger"].to_numpy(),
        open_links["event_micros"].tolist(),
        open_links["record_id"].tolist(),
        limits[tenant_id],
    )
    return _resolution_rows(
        tenant_id, found.identities, found.profiles, found.cut, found.components
    )


def pass_buckets(spark: SparkSession) -> int:
    """How many pandas groups the ordered pass spreads a tenant's pressured components over:
    twice the shuffle partitions, so every core gets work and a bucket is one pandas call."""
    return 2 * int(spark.conf.get("spark.sql.shuffle.partitions", "200"))


def ordered_pass(links: DataFrame, rules: Mapping[str, TenantRules]) -> DataFrame:
    """The ordered pass over the links (tenant_id, component_id, smaller, larger, event_micros,
    record_id) of the components that break a limit: PASS_SCHEMA rows of kind `identity` (its
    profile) and `cut` (a link cut, identity_id its smaller end).

    The components go to a few buckets per tenant (a hash of component_id), one pandas call
    each: a pandas group per component costs milliseconds of fixed overhead, and a graph under
    rule pressure can have hundreds of thousands of small components."""
    limits = {tenant: _limits(found) for tenant, found in rules.items()}
    buckets = pass_buckets(links.sparkSession)
    return (
        links.withColumn("bucket", F.pmod(F.xxhash64("component_id"), F.lit(buckets)))
        .groupBy("tenant_id", "bucket")
        .applyInPandas(bucket_pass(limits), PASS_SCHEMA)
    )


def bucket_pass(limits: Mapping[str, Limits]) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """ordered_pass_bucket with the rules bound, as a typed function: Spark reads the type
    hints of what applyInPandas gets (a functools.partial has none, and it warns)."""

    def ordered_pass(frame: pd.DataFrame) -> pd.DataFrame:
        return ordered_pass_bucket(frame, limits)

    return ordered_pass


def bound_tenant_call(limits: Mapping[str, Limits]) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """tenant_call with the rules bound, typed for applyInPandas (as bucket_pass)."""

    def resolve_tenant(frame: pd.DataFrame) -> pd.DataFrame:
        return tenant_call(frame, limits)

    return resolve_tenant


def _pairs(links: DataFrame) -> DataFrame:
    """(tenant_id, smaller, larger, event_ts, record_id): each link once, with its recency."""
    return (
        links.where(F.col("src") != F.col("dst"))
        .select(
            "tenant_id",
            F.least("src", "dst").alias("smaller"),
            F.greatest("src", "dst").alias("larger"),
            F.struct("event_ts", "record_id").alias("recency"),
        )
        .groupBy("tenant_id", "smaller", "larger")
        .agg(F.max("recency").alias("recency"))
        .select("tenant_id", "smaller", "larger", "recency.event_ts", "recency.record_id")
    )


def _cut_link(other: str, rule: F.Column, namespace: F.Column) -> F.Column:
    return F.struct(
        F.col(other).alias("other_id"),
        rule.alias("rule"),
        namespace.alias("namespace"),
        F.col("event_ts").alias("event_ts"),
        F.col("record_id").alias("record_id"),
    )


class PressuredComponentTooLarge(RuntimeError):
    """A component under rule pressure has more links than one worker's ordered pass takes."""


def pressured_component_error(tenant_id: str, component_id: str, links: int, max_links: int) -> str:
    return (
        f"tenant {tenant_id}: the component of {component_id} has {links:,} links and breaks a "
        f"linking rule, so its links are ordered in one Python worker, which takes at most "
        f"{max_links:,} (about 650 MiB of memory per million links). Block the identity that "
        "joins it (a `blocked` row in seeds/identity_rules.csv), or, if the workers have the "
        "memory, raise PROFILE_LAKE_PRESSURED_MAX_LINKS."
    )


def _pass_pressured(
    open_links: DataFrame,
    components: DataFrame,
    limited: Mapping[str, TenantRules],
    pressured_max_links: int = DEFAULT_PRESSURED_MAX_LINKS,
) -> DataFrame:
    """The ordered pass over the links of the components that break a limit, and only those;
    PressuredComponentTooLarge if one has more than `pressured_max_links` links."""
    pressured = pressured_components(components, limited)
    placed = open_links.join(
        components.withColumnRenamed("identity_id", "smaller"), ["tenant_id", "smaller"]
    )
    pressured_links = (
        placed.join(F.broadcast(pressured), ["tenant_id", "component_id"], "left_semi")
        .select(
            "tenant_id",
            "component_id",
            "smaller",
            "larger",
            F.unix_micros("event_ts").alias("event_micros"),
            "record_id",
        )
        .localCheckpoint()
    )
    largest = (
        pressured_links.groupBy("tenant_id", "component_id")
        .count()
        .orderBy(F.desc("count"))
        .first()
    )
    if largest is not None and largest["count"] > pressured_max_links:
        raise PressuredComponentTooLarge(
            pressured_component_error(
                largest["tenant_id"], largest["component_id"], largest["count"], pressured_max_links
            )
        )
    return ordered_pass(pressured_links, limited)


def _lone_nodes(nodes: DataFrame, open_pairs: DataFrame) -> DataFrame:
    """(tenant_id, src, dst = src) for the nodes in no open link (lone identities, blocked
    ones, and those linked only to blocked ones): a profile of their own. Only those: a
    self-link per node would double the rows resolve_components counts against its fast-path
    limit, sending a tenant the plain path resolves in one worker to the distributed rounds."""
    ends = open_pairs.select("tenant_id", F.col("src").alias("identity_id")).unionByName(
        open_pairs.select("tenant_id", F.col("dst").alias("identity_id"))
    )
    return nodes.join(ends, ["tenant_id", "identity_id"], "left_anti").select(
        "tenant_id", F.col("identity_id").alias("src"), F.col("identity_id").alias("dst")
    )


def _tenant_rows(links: DataFrame, flagged: DataFrame) -> DataFrame:
    """What a tenant's one pandas call gets: each link once (tenant_id, smaller, larger,
    event_micros, record_id, blocked: an end is blocked), and each lone identity (a record
    with no other identity) as a row whose two ends are equal."""
    self_links = (
        links.where(F.col("src") == F.col("dst"))
        .select("tenant_id", F.col("src").alias("smaller"))
        .distinct()
    )
    return flagged.select(
        "tenant_id",
        "smaller",
        "larger",
        F.unix_micros("event_ts").alias("event_micros"),
        "record_id",
        (F.col("smaller_blocked") | F.col("larger_blocked")).alias("blocked"),
    ).unionByName(
        self_links.select(
            "tenant_id",
            "smaller",
            F.col("smaller").alias("larger"),
            F.lit(None).cast("bigint").alias("event_micros"),
            F.lit(None).cast("string").alias("record_id"),
            F.lit(False).alias("blocked"),
        )
    )


def _resolve_in_steps(
    links: DataFrame,
    flagged: DataFrame,
    rules: Mapping[str, TenantRules],
    checkpoint_root: Path,
    fast_path_max_links: int,
    pressured_max_links: int,
) -> DataFrame:
    """TENANT_CALL_SCHEMA rows of tenants too big for one worker: plain components by the
    distributed path, then the ordered pass over the pressured components only, in buckets."""
    spark = links.sparkSession
    nodes = (
        links.select("tenant_id", F.col("src").alias("identity_id"))
        .unionByName(links.select("tenant_id", F.col("dst").alias("identity_id")))
        .distinct()
    )
    open_links = flagged.where(~F.col("smaller_blocked") & ~F.col("larger_blocked"))
    open_pairs = open_links.select(
        "tenant_id", F.col("smaller").alias("src"), F.col("larger").alias("dst")
    )
    lone = _lone_nodes(nodes, open_pairs)
    components = (
        resolve_components(open_pairs.unionByName(lone), checkpoint_root, fast_path_max_links)
        .withColumnRenamed("profile_id", "component_id")
        .localCheckpoint()
    )
    # only tenants with limits can have pressure (blocked rules alone need no ordered pass)
    limited = {tenant: found for tenant, found in rules.items() if found.has_limits}
    passed = (
        _pass_pressured(open_links, components, limited, pressured_max_links).localCheckpoint()
        if limited
        else spark.createDataFrame([], PASS_SCHEMA)
    )
    identities = components.join(
        passed.where(F.col("kind") == "identity").select(
            "tenant_id", "identity_id", F.col("profile_id").alias("passed_profile_id")
        ),
        ["tenant_id", "identity_id"],
        "left",
    ).select(
        "tenant_id",
        F.lit("identity").alias("kind"),
        "identity_id",
        F.coalesce("passed_profile_id", "component_id").alias("profile_id"),
        *(F.lit(None).cast(kind).alias(name) for name, kind in PASS_EXTRA_COLUMNS),
        "component_id",
    )
    cuts = passed.where(F.col("kind") == "cut").withColumn(
        "component_id", F.lit(None).cast("string")
    )
    return identities.unionByName(cuts)


def resolve_ruled_tenants(
    links: DataFrame,
    rules: Mapping[str, TenantRules],
    checkpoint_root: Path,
    fast_path_max_links: int = DEFAULT_FAST_PATH_MAX_LINKS,
    pressured_max_links: int = DEFAULT_PRESSURED_MAX_LINKS,
) -> DataFrame:
    """RESOLVED_COLUMNS for the tenants of `links` (tenant_id, src, dst, event_ts, record_id;
    src = dst for a lone identity), each under its rules."""
    spark = links.sparkSession
    flagged = (
        _pairs(links)
        .withColumn("smaller_blocked", is_blocked(F.col("smaller"), rules))
        .withColumn("larger_blocked", is_blocked(F.col("larger"), rules))
        .localCheckpoint()
    )
    rows = _tenant_rows(links, flagged)
    sizes = {row["tenant_id"]: row["count"] for row in rows.groupBy("tenant_id").count().collect()}
    one_call = [tenant for tenant, count in sizes.items() if count <= fast_path_max_links]
    in_steps = [tenant for tenant, count in sizes.items() if count > fast_path_max_links]
    parts = []
    if one_call:
        limits = {tenant: _limits(rules[tenant]) for tenant in one_call}
        parts.append(
            rows.where(F.col("tenant_id").isin(*one_call))
            .groupBy("tenant_id")
            .applyInPandas(bound_tenant_call(limits), TENANT_CALL_SCHEMA)
        )
    if in_steps:
        parts.append(
            _resolve_in_steps(
                links.where(F.col("tenant_id").isin(*in_steps)),
                flagged.where(F.col("tenant_id").isin(*in_steps)),
                {tenant: rules[tenant] for tenant in in_steps},
                checkpoint_root,
                fast_path_max_links,
                pressured_max_links,
            )
        )
    if not parts:
        parts.append(spark.createDataFrame([], TENANT_CALL_SCHEMA))
    resolved = parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])
    resolved = resolved.localCheckpoint()
    profiles = resolved.where(F.col("kind") == "identity").select(
        "tenant_id", "identity_id", "profile_id", "component_id"
    )
    limit_cuts = (
        resolved.where(F.col("kind") == "cut")
        .withColumn("event_ts", F.timestamp_micros("event_micros"))
        .select(
            "tenant_id",
            F.col("identity_id").alias("home_id"),
            _cut_link("other_id", F.col("rule"), F.col("namespace")),
        )
    )
    home_is_smaller = ~F.col("smaller_blocked") | F.col("larger_blocked")
    blocked_cuts = (
        flagged.where(F.col("smaller_blocked") | F.col("larger_blocked"))
        .withColumn("home_id", F.when(home_is_smaller, F.col("smaller")).otherwise(F.col("larger")))
        .withColumn("other", F.when(home_is_smaller, F.col("larger")).otherwise(F.col("smaller")))
        .select(
            "tenant_id", "home_id", _cut_link("other", F.lit(BLOCKED), F.lit(None).cast("string"))
        )
    )
    cut_links = (
        limit_cuts.toDF("tenant_id", "identity_id", "cut_link")
        .unionByName(blocked_cuts.toDF("tenant_id", "identity_id", "cut_link"))
        .groupBy("tenant_id", "identity_id")
        .agg(F.array_sort(F.collect_list("cut_link")).alias("cut_links"))
    )
    return (
        profiles.join(cut_links, ["tenant_id", "identity_id"], "left")
        .withColumn("cut_links", F.coalesce("cut_links", _no_cut_links()))
        .select(*RESOLVED_COLUMNS)
        .localCheckpoint()
    )


def resolve_with_rules(
    links: DataFrame,
    rules: Mapping[str, TenantRules],
    checkpoint_root: Path,
    fast_path_max_links: int = DEFAULT_FAST_PATH_MAX_LINKS,
    pressured_max_links: int = DEFAULT_PRESSURED_MAX_LINKS,
) -> DataFrame:
    """RESOLVED_COLUMNS for every tenant of `links`: tenants without rules by the plain path
    (their component is their profile, nothing cut), the others by resolve_ruled_tenants.
    `links`: tenant_id, src, dst, and with rules event_ts and record_id. A tenant past the
    fast path's limit fails with PressuredComponentTooLarge when a component under rule
    pressure has more than `pressured_max_links` links."""
    ruled = list(rules)
    plain = links.where(~F.col("tenant_id").isin(*ruled)) if ruled else links
    parts = [
        resolve_components(
            plain.select("tenant_id", "src", "dst").distinct() if ruled else plain,
            checkpoint_root,
            fast_path_max_links,
        ).select(
            "tenant_id",
            "identity_id",
            "profile_id",
            F.col("profile_id").alias("component_id"),
            _no_cut_links().alias("cut_links"),
        )
    ]
    if ruled:
        # computed once: the ruled pass reads the links several times, and a plan that
        # repeats the incremental run's joins under each read takes the optimizer minutes
        parts.append(
            resolve_ruled_tenants(
                links.where(F.col("tenant_id").isin(*ruled)).localCheckpoint(),
                rules,
                checkpoint_root / "ruled",
                fast_path_max_links,
                pressured_max_links,
            )
        )
    return parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])
