"""Migrating a legacy Parquet dataset (issue 39), three ways on the same data in one run:

(a) a plain Spark read-Parquet-write-Delta of the dataset: the floor for anything that
    restates the data;
(b) `in place` (profile-lake migrate in-place): CONVERT TO DELTA's commit over the files where
    they lie, written from the footers; the key contract checked from the footers' null
    counts, the row count audited from the log, the table registered
    (goal: under 5% of (a));
(c) `shadow` (profile-lake migrate shadow): hydrated batch by batch with lineage in each
    commit and the audit trail, then audited (counts per batch, schema, key checksum over
    source and table) (goal: within 1.5x of (a)).

The dataset has the shape of profile_lake.generator.legacy (Hive folders tenant_id=/
snapshot_date=, one row per record with its JSON payload, a `consent` column only in the later
dates' files), written by Spark from synthetic records: scale 1 is 10M rows, about 2 GB.

    .venv/bin/python bench/bench_migration.py [--scale 0.05] [--tenants 4] [--dates 8]
        [--batch-mb 0 [--batch-mb 256]] [--contract keys]

--batch-mb is the shadow's `--batch-mb` (0, the default: a batch per partition; N: consecutive
partitions smaller than N MB share a batch); repeated, each shadow is timed on its own copy.
--contract is both migrations' (`keys`, the default, is checked from the footers in place;
`records_snapshot` reads every row).

Each strategy works on its own copy of the files (the copy is not timed). Everything lives in
a temporary lake under /tmp, removed at the end unless --keep.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from synthetic_records import FULL_PAYLOAD, uniform

FULL_ROWS = 10_000_000
IN_PLACE_GOAL = 0.05
SHADOW_GOAL = 1.5
KEYS = ["tenant_id", "record_id"]


def write_dataset(spark, root: Path, rows: int, tenants: int, dates: int) -> None:
    """The legacy dataset: early dates without `consent`, later ones with it (schema drift)."""
    drift_from = dates // 2
    payload = FULL_PAYLOAD.format(n="id", u3=uniform("id", 3))
    base = spark.range(rows).selectExpr(
        f"concat('t', lpad(cast(id % {tenants} as string), 2, '0')) as tenant_id",
        f"cast(date_add(date'2024-01-01', cast(floor({uniform('id', 2)} * {dates}) as int))"
        " as string) as snapshot_date",
        "concat('leg-', id) as record_id",
        "if(id % 3 = 0, 'event', 'profile') as record_type",
        "concat('email:user', id, '@example.test') as primary_id",
        "array(concat('cookie:c', id)) as related_ids",
        f"{payload} as payload",
        "timestamp_seconds(1704067200 + id) as updated_at",
        "if(id % 2 = 0, 'granted', 'denied') as consent",
    )
    cutoff = f"date_add(date'2024-01-01', {drift_from})"
    early = base.where(f"cast(snapshot_date as date) < {cutoff}").drop("consent")
    late = base.where(f"cast(snapshot_date as date) >= {cutoff}")
    for part in (early, late):
        part.write.mode("append").partitionBy("tenant_id", "snapshot_date").parquet(str(root))


def size_of(root: Path) -> int:
    return sum(path.stat().st_size for path in root.rglob("*.parquet"))


def timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=float, default=1.0, help="1 = 10M rows (about 2 GB)")
    parser.add_argument("--tenants", type=int, default=4)
    parser.add_argument("--dates", type=int, default=8)
    parser.add_argument(
        "--batch-mb",
        type=int,
        action="append",
        help="the shadow's --batch-mb (0: a batch per partition, the default); repeat to time "
        "several shadows side by side",
    )
    parser.add_argument("--contract", default="keys", choices=("keys", "records_snapshot", "none"))
    parser.add_argument("--keep", action="store_true", help="keep the temporary lake")
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="bench-migration-"))
    os.environ["PROFILE_LAKE_HOME"] = str(home)
    from profile_lake.spark import migration as sm
    from profile_lake.spark.session import profile_session

    spark = profile_session()
    lake = sm.Lake(spark, home, "bench")
    rows = int(FULL_ROWS * args.scale)
    source = home / "legacy"
    shadows = args.batch_mb or [0]
    timings: list[tuple[str, float, float | None]] = []  # (what, seconds, goal ratio)
    try:
        write_dataset(spark, source, rows, args.tenants, args.dates)
        names = ["in_place", *[f"shadow_{mb}" for mb in shadows]]
        copies = {name: home / f"legacy_{name}" for name in names}
        for copy in copies.values():
            shutil.copytree(source, copy)
        print(
            f"legacy dataset: {rows:,} rows, {size_of(source) / 1e9:.2f} GB of Parquet, "
            f"{len(list(source.rglob('*.parquet')))} files, {args.tenants} tenants x "
            f"{args.dates} dates (scale {args.scale}), contract {args.contract}",
            flush=True,
        )
        lake.ensure_control_tables()
        contract = {"name": args.contract}

        def plain() -> None:
            frame = spark.read.option("mergeSchema", "true").parquet(str(source))
            frame.write.format("delta").partitionBy("tenant_id", "snapshot_date").save(
                str(home / "plain_delta")
            )

        def in_place() -> None:
            copy = copies["in_place"]
            differences = sm.in_place(lake, "bench_ip", copy, "bench.in_place", KEYS, contract)
            if differences:
                raise SystemExit(f"in-place audit failed: {differences}")

        def shadow(batch_mb: int) -> tuple[str, float]:  # as `profile-lake migrate shadow` runs it
            found: list[int] = []

            def run() -> None:
                with lake.step_group():
                    plan = sm.start_shadow(
                        lake,
                        f"bench_shadow_{batch_mb}",
                        copies[f"shadow_{batch_mb}"],
                        f"bench.shadow_{batch_mb}",
                        KEYS,
                        contract,
                        min_batch_bytes=batch_mb * 1_000_000,
                    )
                    found.append(len(plan.batches))
                    sm.hydrate(lake, plan)
                    differences = sm.audit(lake, plan)
                if differences:
                    raise SystemExit(f"shadow audit failed: {differences}")

            seconds = timed(run)
            option = f", --batch-mb {batch_mb}" if batch_mb else ""
            return f"shadow ({found[0]} batches{option})", seconds

        def note(what: str, seconds: float, goal: float | None) -> None:
            timings.append((what, seconds, goal))
            print(f"timed {what}: {seconds:.1f} s", flush=True)  # a long run's progress

        note("plain read-Parquet-write-Delta", timed(plain), None)
        note("in place (convert, audit)", timed(in_place), IN_PLACE_GOAL)
        for batch_mb in shadows:
            note(*shadow(batch_mb), SHADOW_GOAL)
    finally:
        spark.stop()
        if not args.keep:
            shutil.rmtree(home, ignore_errors=True)

    plain_s = timings[0][1]
    for what, seconds, _ in timings:
        print(f"  {what:<40} {seconds:8.1f} s")
    for what, seconds, goal in timings[1:]:
        ratio = seconds / plain_s
        meets = ratio < goal if goal == IN_PLACE_GOAL else ratio <= goal
        print(
            f"  ratio {what} / plain: {ratio:.3f} "
            f"({'meets' if meets else 'misses'} the goal {'<' if goal == IN_PLACE_GOAL else '<='} "
            f"{goal})"
        )


if __name__ == "__main__":
    main()
