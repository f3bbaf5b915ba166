"""Erasing one person from a big lake (issue 67, SPEC.md section 7).

One lake of about 1M records (8 tenants), built by the pipeline from generated landing data.
After its initial build, two runs, each with one new landing file of 1,000 record lines:
- the same run without a request: the new file alone;
- the run that applies a request: the next new file and one request (`profile-lake forget`'s
  line) naming an identity of a profile of 2 to 5 identities that has records.
Prints both runs' seconds and their ratio (goal: at most 1.5x); for each table keyed by
identity, the data files that held the person's rows before the request, how many of them the
run rewrote (a file kept with a deletion vector counts as rewritten), and the other files it
rewrote against those the run without a request rewrote (goal: no more than the new file's);
and the seconds of `dbt run-operation purge_history` (what `profile-lake purge` runs).

    .venv/bin/python bench/bench_erasure.py [--records 1000000] [--scale 1]
        [--events-per-record 1] [--keep]

--scale shrinks the lake and the files (`--scale 0.01` is a smoke run). Each run is a whole
`dbt build` in this process, as bench_incremental_run.py runs it (whose lake helpers this
script shares).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench_incremental_run import (
    FILE_LINES,
    MIN_FILE_LINES,
    Lake,
    generate_lake,
    generator_config,
)

RECORDS = 1_000_000
GOAL = 1.5
# the tables keyed by identity that an erasure deletes from, and their identity columns
IDENTITY_TABLES = {
    "identity_map": ("identity_id", "canonical_id"),
    "entity_names": ("id",),
    "entity_names_snapshot": ("id",),
}


@dataclass(frozen=True)
class Person:
    tenant_id: str
    identity: str
    identities: tuple[str, ...]  # of the profile, as the lake holds them before the request


def pick_person(spark: Any, schema: str) -> Person:
    """An identity of a profile of 2 to 5 identities with at least one record."""
    row = spark.sql(
        f"""
        with sizes as (
            select tenant_id, profile_id, count(*) as identities
            from {schema}.profile_identities group by tenant_id, profile_id
        )
        select profile.tenant_id, profile.profile_id, min(profile.identity_id) as identity_id
        from {schema}.profile_identities as profile
        inner join sizes using (tenant_id, profile_id)
        inner join {schema}.records as records
            on records.tenant_id = profile.tenant_id
            and records.primary_id = profile.identity_id
        where sizes.identities between 2 and 5
        group by profile.tenant_id, profile.profile_id
        order by profile.tenant_id, profile.profile_id
        limit 1
        """
    ).first()
    members = spark.sql(
        f"select identity_id from {schema}.profile_identities "
        f"where tenant_id = '{row['tenant_id']}' and profile_id = '{row['profile_id']}'"
    ).collect()
    mapped = spark.sql(
        f"select identity_id from {schema}.identity_map where tenant_id = '{row['tenant_id']}' "
        f"and canonical_id in ({', '.join(repr(m['identity_id']) for m in members)})"
    ).collect()
    identities = {m["identity_id"] for m in members} | {m["identity_id"] for m in mapped}
    return Person(row["tenant_id"], row["identity_id"], tuple(sorted(identities)))


def files_holding(spark: Any, schema: str, person: Person) -> dict[str, set[str]]:
    """Names of the data files of each identity table with a row of the person, before the
    request."""
    from pyspark.sql import functions as F

    held = {}
    for table, columns in IDENTITY_TABLES.items():
        frame = spark.table(f"{schema}.{table}").where(F.col("tenant_id") == person.tenant_id)
        naming = None
        for column in columns:
            condition = F.col(column).isin(*person.identities)
            naming = condition if naming is None else naming | condition
        rows = frame.where(naming).select(F.input_file_name().alias("path")).distinct().collect()
        held[table] = {Path(row["path"]).name for row in rows}
    return held


def files_removed(lake: Lake, since_version: dict[str, int]) -> dict[str, set[str]]:
    """Names of the data files each identity table's commits after the versions given removed,
    by any operation: rewritten, or kept with a deletion vector (the commit then removes and
    adds it again). Read from the tables' Delta logs."""
    warehouse = Path(os.environ["PROFILE_LAKE_HOME"]) / "warehouse" / f"{lake.schema}.db"
    removed = {}
    for table in IDENTITY_TABLES:
        names: set[str] = set()
        for commit in sorted((warehouse / table / "_delta_log").glob("*.json")):
            if int(commit.stem) <= since_version[table]:
                continue
            for line in commit.read_text().splitlines():
                action = json.loads(line) if line else {}
                if "remove" in action:
                    names.add(Path(action["remove"]["path"]).name)
        removed[table] = names
    return removed


def latest_versions(spark: Any, schema: str) -> dict[str, int]:
    return {
        table: spark.sql(f"describe history {schema}.{table} limit 1").first()["version"]
        for table in IDENTITY_TABLES
    }


def timed_build(lake: Lake) -> float:
    started = time.perf_counter()
    lake.build()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=RECORDS, help="at scale 1")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--tenants", type=int, default=8)
    parser.add_argument("--events-per-record", type=int, default=1)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    file_lines = max(MIN_FILE_LINES, round(FILE_LINES * args.scale))
    records = max(args.tenants, round(args.records * args.scale))

    root = Path(tempfile.mkdtemp(prefix="bench-erasure-", dir="/tmp"))
    os.environ["PROFILE_LAKE_HOME"] = str(root / "lake")
    os.environ["PROFILE_LAKE_TARGET"] = "local"
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    landing = root / "landing"
    config = generator_config(landing, records, args.tenants, args.events_per_record)
    schema = "bench_erasure"
    lake = Lake("erasure", records, schema, landing, root / "target", root / "logs", config)
    try:
        run(lake, file_lines)
    finally:
        if args.keep:
            print(f"lake kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def run(lake: Lake, file_lines: int) -> None:
    from profile_lake.erasure.command import forget_request, land_request

    from plumbing import run_dbt

    print(f"erasure: {lake.records:,} records, new files of {file_lines:,} record lines")
    seconds = generate_lake(lake, file_lines, 2)
    print(f"  {lake.lines:,} landing lines in {lake.files} files, generated in {seconds:.1f} s")
    from profile_lake.spark.session import profile_session

    spark = profile_session("local")  # the session dbt's runs get
    print(f"  initial build: {timed_build(lake):.1f} s (load {os.getloadavg()[0]:.1f})", flush=True)

    before_without = latest_versions(spark, lake.schema)
    lake.land_next_file()
    without = timed_build(lake)
    print(f"  one new file, no request: {without:.1f} s (load {os.getloadavg()[0]:.1f})")
    removed_without = files_removed(lake, before_without)

    person = pick_person(spark, lake.schema)
    held = files_holding(spark, lake.schema, person)
    before_applying = latest_versions(spark, lake.schema)
    lake.land_next_file()
    land_request(
        forget_request(person.tenant_id, person.identity, "bench-1", datetime.now(UTC)),
        lake.landing,
    )
    applying = timed_build(lake)
    print(
        f"  one new file and a request ({len(person.identities)} identities): {applying:.1f} s "
        f"(load {os.getloadavg()[0]:.1f})"
    )
    removed_applying = files_removed(lake, before_applying)
    erased = spark.sql(
        f"select * from {lake.schema}.erasure_requests where request_id = 'bench-1'"
    ).first()
    print(
        f"  applied: {erased['identities_erased']} identities, {erased['records_erased']} "
        f"records erased"
    )
    only_held = True
    for table in IDENTITY_TABLES:
        rewritten = held[table] & removed_applying[table]
        beyond = removed_applying[table] - held[table]
        only_held &= len(beyond) <= len(removed_without[table])
        print(
            f"    {table}: {len(held[table])} data files held the person, {len(rewritten)} of "
            f"them rewritten or given a deletion vector; {len(beyond)} other files rewritten "
            f"(the run without a request: {len(removed_without[table])})"
        )

    started = time.perf_counter()
    run_dbt(
        ["run-operation", "purge_history", "--log-path", str(lake.logs), "--quiet"],
        env=lake.env(),
        target_path=lake.target,
    )
    purge = time.perf_counter() - started
    print(f"  profile-lake purge: {purge:.1f} s")
    ratio = applying / without
    verdict = "met" if ratio <= GOAL else "missed"
    print(
        f"run applying the request / same run without: {ratio:.2f}x (goal <= {GOAL}x, {verdict}); "
        f"no more files rewritten than the person's and the new file's: "
        f"{'yes' if only_held else 'no'}"
    )
    print(json.dumps({"without": without, "applying": applying, "purge": purge}))


if __name__ == "__main__":
    main()
