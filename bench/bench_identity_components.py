"""Connected components on one graph of about 1M edges (or the count given) with a realistic
shape (three giant components, many components of 4 identities): ours (`resolve_components`:
the distributed path forced, its large-star / small-star rounds alone up to 2M edges, and the
union-find fast path) against Spark's own GraphX (`org.apache.spark.graphx.lib.
ConnectedComponents`, the Pregel label propagation that GraphFrames runs with
algorithm="graphx"; its jar ships with pyspark), same graph, same session, checking the
components are identical. Goal: the distributed path at least as fast as GraphX at 1M edges
(moonshot 2x), and a figure at 10M. Its timer covers mapping the identities to long
vertex ids, the Pregel run and materializing the vertices; not mapping them back to
identities (ours includes writing its Delta table), so the ratio favours GraphX.

Optionally against GraphFrames' connectedComponents too. GraphFrames' Python package is
pinned in requirements.lock; its JVM jars (io.graphframes:graphframes-spark4_2.13 and
graphframes-graphx-spark4_2.13, same version) are not fetched by `make setup` (the project does
not need them, and not every Maven mirror serves them): list their paths in GRAPHFRAMES_JARS,
comma-separated, to compare. GraphFrames has known wrong results with
adaptive query execution on (its issues 428, 453): it runs with AQE off, ours with the
profile's AQE on. Its connectedComponents needs a checkpoint folder
(SparkContext.setCheckpointDir): one under the bench's lake.

    .venv/bin/python bench/bench_identity_components.py [edges (default 1000000)]
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from pyspark import RDD
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from profile_lake.spark.identity_graph import resolve_components

from plumbing import bench_session, report, timed


def graphframes_jars() -> list[str]:
    listed = os.environ.get("GRAPHFRAMES_JARS", "")
    return [path for path in listed.split(",") if path]


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


def scala_object(package: Any, name: str) -> Any:
    """A Scala `object` (its MODULE$ instance) through py4j, e.g. scala.None."""
    return getattr(getattr(package, f"{name}$"), "MODULE$")


def graphx_components(spark: SparkSession, links: DataFrame) -> tuple[DataFrame, Any]:
    """GraphX's ConnectedComponents over `links` (src, dst identity strings), through py4j:
    the identities numbered (GraphX needs long vertex ids), the Pregel run, its vertices
    cached and counted. Returns the identity numbering and the cached JVM vertex RDD."""
    jvm = spark._jvm
    vertex_ids = (
        links.select(F.col("src").alias("identity_id"))
        .union(links.select(F.col("dst").alias("identity_id")))
        .distinct()
        .withColumn("vertex_id", F.monotonically_increasing_id())
        .cache()
    )
    edges = links.join(
        vertex_ids.select(F.col("identity_id").alias("src"), F.col("vertex_id").alias("src_id")),
        "src",
    ).join(
        vertex_ids.select(F.col("identity_id").alias("dst"), F.col("vertex_id").alias("dst_id")),
        "dst",
    )
    encoders = jvm.org.apache.spark.sql.Encoders
    long_pairs = encoders.tuple(encoders.scalaLong(), encoders.scalaLong())
    edge_tuples = getattr(edges.select("src_id", "dst_id")._jdf, "as")(long_pairs).rdd()
    int_tag = scala_object(jvm.scala.reflect, "ClassTag").Int()
    memory = jvm.org.apache.spark.storage.StorageLevel.MEMORY_ONLY()
    graph = jvm.org.apache.spark.graphx.Graph.fromEdgeTuples(
        edge_tuples, 1, scala_object(jvm.scala, "None"), memory, memory, int_tag
    )
    components = jvm.org.apache.spark.graphx.lib.ConnectedComponents.run(graph, int_tag, int_tag)
    vertices = components.vertices().cache()
    vertices.count()
    return vertex_ids, vertices


def graphx_result(spark: SparkSession, vertex_ids: DataFrame, vertices: Any) -> DataFrame:
    """GraphX's (vertex id, component) pairs as (identity_id, component), through pyspark's
    pickling of JVM pairs (as SparkContext.sequenceFile does)."""
    jvm = spark._jvm
    pickled = jvm.org.apache.spark.api.python.SerDeUtil.pairRDDToPython(vertices, 4096)
    any_tag = scala_object(jvm.scala.reflect, "ClassTag").Any()
    rows = RDD(jvm.org.apache.spark.api.java.JavaRDD.fromRDD(pickled, any_tag), spark.sparkContext)
    pairs = spark.createDataFrame(rows, "vertex_id long, component long")
    return pairs.join(vertex_ids, "vertex_id").select(F.col("identity_id").alias("id"), "component")


def assert_same_components(ours: DataFrame, theirs: DataFrame, components: int) -> None:
    """The same identities, and every component of theirs is exactly one of ours (their labels
    are numbers, ours the smallest identity: compare the partitions)."""
    pairs = ours.join(theirs.withColumnRenamed("id", "identity_id"), "identity_id")
    assert pairs.count() == ours.count() == theirs.count(), "not the same identities"
    assert (
        pairs.groupBy("component")
        .agg(F.countDistinct("profile_id").alias("n"))
        .where("n > 1")
        .isEmpty()
    ), "one of their components spans several of ours"
    assert pairs.select("component").distinct().count() == components, "component counts differ"


# The distributed path's buckets here: a quarter of the 1M-link graph each, so no bucket holds
# the whole graph and the passes have boundaries to resolve.
BUCKET_MAX_LINKS = 250_000
# The large-star / small-star rounds (the distributed path's fallback) are timed up to here.
ROUNDS_MAX_EDGES = 2_000_000


def main() -> None:
    edges = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    jars = graphframes_jars()
    spark = bench_session("components", extra_jars=jars)
    home = Path(os.environ["PROFILE_LAKE_HOME"])

    def ours(name: str, **paths: int):
        def run():
            result = resolve_components(links, home / "checkpoints" / name, **paths)
            result.write.format("delta").mode("overwrite").saveAsTable(f"bench_{name}")
            return spark.table(f"bench_{name}")

        return run

    def graphx():
        vertex_ids, vertices = graphx_components(spark, links)
        found.append((vertex_ids, vertices))
        return vertex_ids, vertices

    found: list = []
    build_graph(spark, edges).write.format("delta").mode("overwrite").saveAsTable("bench_links")
    links = spark.table("bench_links")
    link_count = links.count()

    # the distributed path and GraphX: best of two runs each, so that neither pays the JVM's
    # warm-up (its JIT compiling the code paths each takes) in its figure
    distributed_s, ours_distributed = timed(
        ours("contracted", fast_path_max_links=0, bucket_max_links=BUCKET_MAX_LINKS), repeat=2
    )
    fast_s, ours_fast = timed(ours("fast", fast_path_max_links=10**9))
    profiles = ours_distributed.select("profile_id").distinct().count()
    assert ours_distributed.exceptAll(ours_fast).isEmpty(), "the two paths disagree"
    print(f"graph: {link_count} links, {ours_fast.count()} identities, {profiles} components")
    timings = [
        (f"ours, distributed ({BUCKET_MAX_LINKS:,}-link buckets)", distributed_s),
        ("ours, union-find fast path (one worker)", fast_s),
    ]
    if edges <= ROUNDS_MAX_EDGES:
        rounds_s, ours_rounds = timed(
            ours("rounds", fast_path_max_links=0, max_contraction_passes=0)
        )
        assert ours_rounds.exceptAll(ours_fast).isEmpty(), "the rounds disagree"
        timings.append(("ours, large/small-star rounds alone", rounds_s))

    graphx_s, (vertex_ids, vertices) = timed(graphx, repeat=2)
    for earlier_ids, earlier_vertices in found[:-1]:
        earlier_vertices.unpersist(False)
        earlier_ids.unpersist()
    assert_same_components(ours_fast, graphx_result(spark, vertex_ids, vertices), profiles)
    vertices.unpersist(False)
    vertex_ids.unpersist()
    for label, seconds in timings:
        report(
            f"connected components, {link_count} links",
            (label, seconds),
            ("Spark GraphX ConnectedComponents (Pregel)", graphx_s),
            ">= 1x for the distributed path, moonshot 2x",
        )
    if not jars:
        print(
            "GraphFrames not compared: list the paths of its jars "
            "(io.graphframes:graphframes-spark4_2.13, graphframes-graphx-spark4_2.13) in "
            "GRAPHFRAMES_JARS to compare."
        )
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
    assert_same_components(ours_fast, theirs, profiles)
    report(
        f"connected components, {link_count} links",
        (timings[0][0], distributed_s),
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
