"""Single-key fetch from identity_index (10M identities), warm, against a full scan of the same
data. The index is written as the model writes it (sorted by tenant_id, identity_id, at most
100 000 rows per file, statistics on those columns); the full scan reads the same rows written
without that layout. Goal: under 1 s and at least 20x.

Measured twice, each engine against itself: through Spark (a query filtering on the key, its
session warm), and through the deltalake reader that `profile-lake lookup` uses (no JVM; each
fetch opens the table anew, as the command does).

    .venv/bin/python bench/bench_identity_index.py [identities (default 10000000)]
"""

from __future__ import annotations

import sys
from pathlib import Path

from profile_lake.lookup import read_matching

from plumbing import bench_session, report, timed

ROWS_PER_FILE = 100_000


def main() -> None:
    identities = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    spark = bench_session("index")
    rows = f"""
        select
            concat('t', id % 50) as tenant_id,
            concat('email:', sha2(cast(id as string), 256), '@x.test') as identity_id,
            concat('email:', id % 1000003, '@x.test') as canonical_id,
            concat('cookie:', id % 333331) as profile_id
        from range({identities})
    """
    properties = "tblproperties ('delta.dataSkippingStatsColumns' = 'tenant_id,identity_id')"
    spark.sql(f"set spark.sql.files.maxRecordsPerFile = {ROWS_PER_FILE}")
    spark.sql(
        f"create or replace table bench_identity_index using delta {properties} as "
        f"select * from ({rows}) order by tenant_id, identity_id"
    )
    spark.sql("reset spark.sql.files.maxRecordsPerFile")
    spark.sql(f"create or replace table bench_identity_unsorted using delta as {rows}")
    key = spark.sql(
        "select tenant_id, identity_id from bench_identity_index where profile_id = 'cookie:4242'"
        " limit 1"
    ).first()
    predicate = f"tenant_id = '{key[0]}' and identity_id = '{key[1]}'"

    def fetch() -> list:
        return spark.sql(f"select * from bench_identity_index where {predicate}").collect()

    def scan() -> list:
        return spark.sql(f"select * from bench_identity_unsorted where {predicate}").collect()

    fetch(), scan()  # warm: JVM, Delta log and file listing cached
    ours, found = timed(fetch, repeat=5)
    theirs, scanned = timed(scan, repeat=3)
    assert found == scanned and len(found) == 1
    files = spark.sql("describe detail bench_identity_index").first()["numFiles"]
    report(
        f"Spark: one key of {identities} identities ({files} index files)",
        ("identity_index fetch (warm)", ours),
        ("full scan of the same rows", theirs),
        "< 1 s and >= 20x",
    )

    def folder(table: str) -> Path:
        location = spark.sql(f"describe detail {table}").first()["location"]
        return Path(location.removeprefix("file:"))

    wanted = {key[0]: [key[1]]}
    index_dir, unsorted_dir = folder("bench_identity_index"), folder("bench_identity_unsorted")
    read_matching(index_dir, "identity_id", wanted)  # warm: page cache, imports
    ours, found_here = timed(lambda: read_matching(index_dir, "identity_id", wanted), repeat=5)
    theirs, scanned_here = timed(lambda: read_matching(unsorted_dir, "identity_id", wanted))
    assert found_here == scanned_here == [row.asDict() for row in found]
    report(
        "deltalake reader (profile-lake lookup), same key and tables",
        ("identity_index fetch", ours),
        ("full scan of the same rows", theirs),
        "< 1 s and >= 20x",
    )


if __name__ == "__main__":
    main()
