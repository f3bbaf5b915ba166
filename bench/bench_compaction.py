"""The limit of small files a partition keeps before a run compacts it (var
compaction_max_small_files, profile_lake/compaction.py), measured.

One tenant's partition of a table of 1M rows (8 tenants, Z-ordered by key, as the marts are)
gets small appends, one file each, as runs add them. At 1, 16, 64, 128 and 256 files in the
partition it times the two reads a mart makes of a source: a look-up of 200 keys and a scan of
the tenant's key column (each the best of five). Their growth per file is what every scan of
the partition pays for not compacting; the OPTIMIZE ZORDER of the partition is what compacting
costs. With a compaction every T files, a partition holds T / 2 extra files on average, so a
run that scans it S times pays S x T / 2 x (cost per file), and the compaction C / T: the
total is least at T = sqrt(2 C / (S x cost per file)).

    .venv/bin/python bench/bench_compaction.py [rows (default 1000000)]
"""

from __future__ import annotations

import math
import sys

from plumbing import bench_session, timed

TENANTS = 8
FILE_COUNTS = (1, 16, 64, 128, 256)
APPEND_ROWS = 100
LOOKUP_KEYS = 200
# scans of one table's partition in a run: a table is read by two to four nodes, several of
# them more than once (bench/README.md)
SCANS_PER_RUN = (2, 4, 8)
TABLE = "bench_compaction"


def main() -> None:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    spark = bench_session("compaction")
    per_tenant = rows // TENANTS
    print(f"writing {rows:,} rows in {TENANTS} tenant partitions, Z-ordered by key", flush=True)
    spark.range(rows).selectExpr(
        f"concat('t', id % {TENANTS}) as tenant_id",
        f"id div {TENANTS} as key",
        "sha2(cast(id as string), 256) as payload",
    ).write.format("delta").partitionBy("tenant_id").saveAsTable(TABLE)
    spark.sql(f"optimize {TABLE} zorder by (key)").collect()

    keys = ", ".join(str(key * (per_tenant // LOOKUP_KEYS)) for key in range(LOOKUP_KEYS))
    lookup = (
        f"select count(*), max(payload) from {TABLE} where tenant_id = 't0' and key in ({keys})"
    )
    scan = f"select count(distinct key) from {TABLE} where tenant_id = 't0'"

    def reads() -> float:
        seconds = 0.0
        for sql in (lookup, scan):
            best, _ = timed(lambda sql=sql: spark.sql(sql).collect(), repeat=5)
            seconds += best
        return seconds

    reads()  # warm: the first queries of a session plan and load classes
    files, timings = 1, {}
    next_key = per_tenant
    for count in FILE_COUNTS:
        while files < count:
            spark.range(next_key, next_key + APPEND_ROWS).selectExpr(
                "'t0' as tenant_id", "id as key", "sha2(cast(id as string), 256) as payload"
            ).coalesce(1).write.format("delta").mode("append").saveAsTable(TABLE)
            next_key += APPEND_ROWS
            files += 1
        timings[count] = reads()
        print(f"  {count:>3} files: the look-up and the scan {timings[count]:.3f} s", flush=True)

    compaction, _ = timed(
        lambda: spark.sql(f"optimize {TABLE} where tenant_id = 't0' zorder by (key)").collect()
    )
    after = reads()
    slope = _slope(timings)
    shown = (
        f"OPTIMIZE ZORDER of the partition ({per_tenant:,} rows, {files} files): {compaction:.3f} s"
    )
    print(shown)
    print(f"after it, the look-up and the scan: {after:.3f} s")
    print(f"cost per small file per scan: {slope * 1000 / 2:.2f} ms")
    for scans in SCANS_PER_RUN:
        best = math.sqrt(2 * compaction / (scans * slope / 2)) if slope > 0 else float("inf")
        print(f"  {scans} scans a run: least total cost at a compaction every {best:.0f} files")


def _slope(timings: dict[int, float]) -> float:
    """Least-squares seconds per file of the reads against the file count."""
    counts = list(timings)
    mean_count = sum(counts) / len(counts)
    mean_time = sum(timings.values()) / len(counts)
    spread = sum((count - mean_count) ** 2 for count in counts)
    return sum((count - mean_count) * (timings[count] - mean_time) for count in counts) / spread


if __name__ == "__main__":
    main()
