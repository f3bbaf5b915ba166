"""Connected components on one graph of about 1M edges with a realistic shape (three giant
components, many components of 4 identities): ours (`resolve_components`: the distributed
large-star / small-star rounds, and the union-find fast path) against GraphFrames'
connectedComponents, same graph, same session, checking the components are identical.
Goal: at least 2x faster than GraphFrames.

GraphFrames' Python package is pinned in requirements.lock and its JVM jars
(io.graphframes:graphframes-spark4_2.13 and graphframes-graphx-spark4_2.13, same version) are
fetched by `make setup` into `.cache/graphframes/` (jars/pom.xml, profile `graphframes`); or list
jars in GRAPHFRAMES_JARS, comma-separated. Without them only ours runs, and the script says so.
GraphFrames has known wrong results with adaptive query execution on (its issues 428, 453): it
runs here with AQE off, ours with the profile's AQE on. Its connectedComponents needs a
checkpoint folder (SparkContext.setCheckpointDir): one under the bench's lake.

    .venv/bin/python bench/bench_identity_components.py [edges (default 1000000)]
"""

from __future__ import annotations

import glob
import os
import sys
import tempfile
from pathlib import Path

from pyspark.sql import functions as F

from profile_lake.spark.identity_bench import bench_session, report, timed
from profile_lake.spark.identity_graph import resolve_components

PROJECT = Path(__file__).resolve().parents[1]


def graphframes_jars() -> list[str]:
    listed = os.environ.get("GRAPHFRAMES_JARS")
    if listed:
        return listed.split(",")
    return sorted(glob.glob(str(PROJECT / ".cache" / "graphframes" / "*.jar")))


def build_graph(spark, edges: int):
    """~40% of edges in 3 giant components (a random tree plus random extra edges each), the
    rest in components of 4 identities."""
    giant_nodes = edges // 10 * 3  # a multiple of 3: ids keep their class mod 3
    extra = edges // 10
    small_edges = edges - giant_nodes - extra
    tree = spark.sql(f"""
        select concat('email:g', id) as src,
               concat('email:g', pmod(id - 3 * (1 + pmod(xxhash64(id), greatest(id div 3, 1))),
                                      {giant_nodes})) as dst
        from range(3, {giant_nodes})
    """)
    extras = spark.sql(f"""
        select concat('cookie:g', a) as src,
               concat('email:g', pmod(b - pmod(b, 3) + pmod(a, 3), {giant_nodes})) as dst
        from (select pmod(xxhash64(id, 1), {giant_nodes}) as a,
                     pmod(xxhash64(id, 2), {giant_nodes}) as b from range({extra}))
    """)
    extra_links = spark.sql(f"""
        select concat('cookie:g', a) as src, concat('email:g', a) as dst
        from (select pmod(xxhash64(id, 1), {giant_nodes}) as a from range({extra}))
    """)
    small = spark.sql(f"""
        select concat('crm:s', id) as src, concat('crm:s', id - pmod(id, 4)) as dst
        from range({small_edges}) where pmod(id, 4) != 0
    """)
    return (
        tree.unionByName(extras)
        .unionByName(extra_links)
        .unionByName(small)
        .select(F.lit("acme").alias("tenant_id"), "src", "dst")
    )


def main() -> None:
    edges = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    jars = graphframes_jars()
    spark = bench_session("components", extra_jars=jars)
    home = Path(os.environ["PROFILE_LAKE_HOME"])
    build_graph(spark, edges).write.format("delta").mode("overwrite").saveAsTable("bench_links")
    links = spark.table("bench_links")
    link_count = links.count()

    def ours_distributed():
        result = resolve_components(links, home / "checkpoints" / "bench", fast_path_max_links=0)
        result.write.format("delta").mode("overwrite").saveAsTable("bench_ours")
        return spark.table("bench_ours")

    def ours_fast_path():
        result = resolve_components(links, home / "checkpoints" / "bench_fast", 10**9)
        result.write.format("delta").mode("overwrite").saveAsTable("bench_ours_fast")
        return spark.table("bench_ours_fast")

    distributed_s, ours = timed(ours_distributed)
    fast_s, ours_fast = timed(ours_fast_path)
    profiles = ours.select("profile_id").distinct().count()
    assert ours.exceptAll(ours_fast).isEmpty(), "the two paths disagree"
    print(f"graph: {link_count} links, {ours.count()} identities, {profiles} components")
    if not jars:
        print(
            "GraphFrames not compared: no jars in .cache/graphframes/ (make setup fetches "
            "io.graphframes:graphframes-spark4_2.13 and graphframes-graphx-spark4_2.13 there when "
            "Maven Central serves them) nor in GRAPHFRAMES_JARS."
        )
        print(f"  ours, distributed (large/small-star) {distributed_s:9.3f} s")
        print(f"  ours, union-find fast path           {fast_s:9.3f} s")
        return

    from graphframes import GraphFrame

    def graphframes_components():
        aqe = spark.conf.get("spark.sql.adaptive.enabled")
        spark.conf.set("spark.sql.adaptive.enabled", "false")  # GraphFrames issues 428, 453
        spark.sparkContext.setCheckpointDir(tempfile.mkdtemp(dir=home, prefix="gf-checkpoints-"))
        try:
            vertices = (
                links.select(F.col("src").alias("id"))
                .union(links.select(F.col("dst").alias("id")))
                .distinct()
            )
            graph = GraphFrame(vertices, links.select("src", "dst"))
            result = graph.connectedComponents()
            result.write.format("delta").mode("overwrite").saveAsTable("bench_graphframes")
        finally:
            spark.conf.set("spark.sql.adaptive.enabled", aqe)
        return spark.table("bench_graphframes")

    theirs_s, theirs = timed(graphframes_components)
    # identical components: the same identities, and every GraphFrames component is exactly
    # one of ours (its labels are numbers, ours the smallest identity: compare the partitions)
    pairs = ours.join(theirs.withColumnRenamed("id", "identity_id"), "identity_id")
    assert pairs.count() == ours.count() == theirs.count(), "not the same identities"
    assert (
        pairs.groupBy("component")
        .agg(F.countDistinct("profile_id").alias("n"))
        .where("n > 1")
        .isEmpty()
    )
    assert pairs.select("component").distinct().count() == profiles
    report(
        f"connected components, {link_count} links",
        ("ours, distributed large/small-star", distributed_s),
        ("GraphFrames connectedComponents (AQE off)", theirs_s),
        ">= 2x",
    )
    report(
        f"connected components, {link_count} links",
        ("ours, union-find fast path", fast_s),
        ("GraphFrames connectedComponents (AQE off)", theirs_s),
        ">= 2x",
    )


if __name__ == "__main__":
    main()
