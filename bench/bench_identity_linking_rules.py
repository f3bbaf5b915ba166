"""Profiles under linking rules against plain connected components, same graph, same session.

One tenant's graph of about `links` links (default 1M): people, each an email, a cookie and a
CRM id linked by their own record; pairs of people sharing a device (a `crm` limit of 1 splits
them); and three collapsing identities each linking `hub` people (default 5% of the links:
50K at 1M): a test email and a call-centre phone, both blocked, and a kiosk device, which the
`crm` limit cuts down to its newest link. Every record is one second newer than the last.

Timed, each written to a Delta table: `resolve_with_rules` with the rules, and the same
function without rules (the plain path, `resolve_components`, which is what a tenant without
rules runs), on two graphs: the worst case, where the `crm` limit puts every component under
pressure (goal: within 2x), and a tenant whose hubs alone (1% of the links, their components
about 5%) break a `max_identities` limit of 10 (goal: within 1.2x). Then the ordered pass
alone (its pandas call on one component, as a Python worker runs it: time and peak memory) on
star components of 50K, 200K and 1M links: how large a component under rule pressure may get
before it would need a distributed pass.

    .venv/bin/python bench/bench_identity_linking_rules.py [links (default 1000000)] [hub]
"""

from __future__ import annotations

import os
import sys
import time
import tracemalloc
from pathlib import Path

import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from profile_lake.identity.linking import Limits
from profile_lake.identity.rules import TenantRules
from profile_lake.spark.identity_linking import ordered_pass_bucket, resolve_with_rules

from plumbing import bench_session, report, timed

RULES = {
    "acme": TenantRules(
        blocked=("email:test@example.com", "phone:+1555%"), namespace_limits={"crm": 1}
    )
}


def build_links(spark: SparkSession, links: int, hub: int) -> DataFrame:
    """(tenant_id, src, dst, event_ts, record_id): 2 links per person, 1 per person to a shared
    device, 3 hubs of `hub` people each."""
    people = max((links - 3 * hub) // 3, 2)
    person = f"""
        select id as person, timestamp_seconds(1767225600 + id) as event_ts,
               concat('r', lpad(id, 8, '0')) as record_id
        from range({people})
    """
    spark.sql(person).createOrReplaceTempView("bench_people")
    own = spark.sql("""
        select concat('email:p', person) as src, concat('cookie:c', person) as dst,
               event_ts, record_id from bench_people
        union all
        select concat('email:p', person), concat('crm:', person), event_ts, record_id
        from bench_people
        union all
        select concat('crm:', person), concat('device:d', person div 2), event_ts, record_id
        from bench_people
    """)
    hubs = spark.sql(f"""
        select case hub when 0 then concat('email:p', person)
                        when 1 then concat('cookie:c', person)
                        else concat('crm:', person) end as src,
               case hub when 0 then 'email:test@example.com'
                        when 1 then 'phone:+15550000'
                        else 'device:kiosk' end as dst,
               timestamp_seconds(1767225600 + {people} + id) as event_ts,
               concat('h', hub, '-', lpad(id, 8, '0')) as record_id
        from (select id, id div {hub} as hub, pmod(id * 7 + id div {hub}, {people}) as person
              from range({3 * hub}))
    """)
    return own.unionByName(hubs).select(F.lit("acme").alias("tenant_id"), "*")


def star_component(size: int) -> pd.DataFrame:
    """One star component of `size` links to a hub, a crm id each, as the ordered pass's
    pandas call gets it (with a crm limit of 1 every link after the first is cut: the worst
    case for allocations)."""
    return pd.DataFrame(
        {
            "tenant_id": "acme",
            "component_id": "crm:0",
            "smaller": [f"crm:{index}" for index in range(size)],
            "larger": "device:kiosk",
            "event_micros": [1_767_225_600_000_000 + index for index in range(size)],
            "record_id": [f"r{index}" for index in range(size)],
        }
    )


def ordered_pass_cost(size: int) -> tuple[float, float]:
    """Seconds and peak Python memory (MiB, tracemalloc: links, union-find, pandas output) of
    the ordered pass's pandas call on one star component of `size` links."""
    frame = star_component(size)
    began = time.perf_counter()
    found = ordered_pass_bucket(frame, {"acme": Limits(None, {"crm": 1})})
    elapsed = time.perf_counter() - began
    assert (found["kind"] == "cut").sum() == size - 1
    del found
    tracemalloc.start()
    ordered_pass_bucket(frame, {"acme": Limits(None, {"crm": 1})})
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return elapsed, peak / 2**20


# A tenant where about 5% of the links are under pressure: hubs of 1% of the links (the kiosk's
# component, its people and their device partners), and a size limit that only the hubs break.
LIGHT_RULES = {
    "acme": TenantRules(blocked=("email:test@example.com", "phone:+1555%"), max_identities=10)
}


def compare(spark: SparkSession, home: Path, links: int, hub: int, rules: dict, name: str) -> None:
    """Plain components against `rules` on the graph of `links` links with hubs of `hub`."""
    build_links(spark, links, hub).write.format("delta").mode("overwrite").saveAsTable(
        "bench_rule_links"
    )
    graph = spark.table("bench_rule_links")
    link_count = graph.count()

    def resolved(rules: dict, table: str) -> DataFrame:
        result = resolve_with_rules(graph, rules, home / "checkpoints" / table)
        result.write.format("delta").mode("overwrite").saveAsTable(table)
        return spark.table(table)

    plain_s, plain = timed(lambda: resolved({}, "bench_plain"))
    rules_s, ruled = timed(lambda: resolved(rules, "bench_ruled"))
    cut = ruled.select(F.explode("cut_links").alias("cut")).groupBy("cut.rule").count()
    by_rule = {row["rule"]: row["count"] for row in cut.collect()}
    pressured = (
        ruled.where(F.col("profile_id") != F.col("component_id")).select("component_id").distinct()
    )
    under_pressure = ruled.join(pressured, "component_id").count()
    print(
        f"graph: {link_count} links, {plain.count()} identities, hubs of {hub} people; "
        f"{plain.select('profile_id').distinct().count()} plain profiles, "
        f"{ruled.select('profile_id').distinct().count()} under the rules; links cut: {by_rule}; "
        f"identities in components split by a limit: {under_pressure}"
    )
    report(
        f"profiles under linking rules ({name}), {link_count} links",
        ("plain connected components", plain_s),
        ("with the rules", rules_s),
        "rules / plain <= 2x (worst case), <= 1.2x (about 5% under pressure)",
    )


def main() -> None:
    links = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    hub = int(sys.argv[2]) if len(sys.argv) > 2 else max(links // 20, 1)
    spark = bench_session("linking-rules")
    home = Path(os.environ["PROFILE_LAKE_HOME"])
    # a small graph first, so that neither side pays the JVM's warm-up alone
    compare(spark, home, 30_000, 1_000, RULES, "warm-up")
    compare(spark, home, links, hub, RULES, "worst case: every component under a crm limit")
    compare(spark, home, links, max(links // 100, 1), LIGHT_RULES, "hubs alone under a limit")
    print("ordered pass alone, one star component (one pandas call, as a worker runs it):")
    for size in (50_000, 200_000, 1_000_000):
        seconds, mebibytes = ordered_pass_cost(size)
        print(f"  {size:>9} links  {seconds:7.2f} s  peak Python memory {mebibytes:6.0f} MiB")


if __name__ == "__main__":
    main()
