"""Ingest throughput: lines and megabytes per second of the ingest step alone (landing files to
the Delta landing tables, profile_lake.ingest.staging.ingest_landing), then of the staging
model that parses, converts and validates them (stg_records__changes, run by dbt), on about a
million generated record lines with ~1 KB payloads. Both steps in one run, same session.

    .venv/bin/python bench/bench_ingest_throughput.py [--records-per-tenant 40000]

Everything lives in a temporary lake and landing folder under /tmp, removed at the end.
PROFILE_LAKE_DRIVER_MEMORY (default here 10g) sizes the driver.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

SCHEMA = "bench_ingest"


def _generate(landing: Path, records_per_tenant: int, payload_fields: int) -> None:
    from profile_lake.generator.config import GeneratorConfig
    from profile_lake.generator.core import generate

    generate(
        GeneratorConfig(
            out=landing,
            seed=5,
            tenants=8,
            records_per_tenant=records_per_tenant,
            events_per_record=3,
            payload_fields=payload_fields,
            payload_depth=2,
            bad_rate=0.001,
            renames_per_tenant=0,
            names_per_tenant=0,
            lines_per_file=50_000,
            quiet=True,
        )
    )


def _landed(landing: Path) -> tuple[int, int, int]:
    """(files, lines, bytes) of the landing folder (uncompressed)."""
    files = lines = size = 0
    for path in landing.glob("*/*.jsonl"):
        content = path.read_bytes()
        files += 1
        lines += content.count(b"\n")
        size += len(content)
    return files, lines, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records-per-tenant", type=int, default=40_000)
    parser.add_argument("--payload-fields", type=int, default=50)
    parser.add_argument("--skip-model", action="store_true", help="time the ingest step only")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="bench-ingest-", dir="/tmp"))
    home, landing = root / "lake", root / "landing"
    # Forced, not defaulted: `make bench` exports the project's own PROFILE_LAKE_HOME.
    os.environ["PROFILE_LAKE_HOME"] = str(home)
    os.environ["PROFILE_LAKE_LANDING"] = str(landing)
    os.environ["PROFILE_LAKE_SCHEMA"] = SCHEMA
    os.environ.setdefault("PROFILE_LAKE_DRIVER_MEMORY", "10g")
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    try:
        started = time.perf_counter()
        _generate(landing, args.records_per_tenant, args.payload_fields)
        files, lines, size = _landed(landing)
        print(
            f"ingest throughput: {lines:,} lines in {files} files, {size / 1e6:,.0f} MB "
            f"({size / lines:,.0f} bytes/line), generated in {time.perf_counter() - started:.0f}s"
        )
        run(home, landing, lines, size, skip_model=args.skip_model)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run(home: Path, landing: Path, lines: int, size: int, skip_model: bool) -> None:
    from profile_lake.ingest.staging import IngestSettings, ingest_landing
    from profile_lake.project import project_var
    from profile_lake.spark.session import profile_session

    spark = profile_session()
    settings = IngestSettings(
        str(landing),
        f"{SCHEMA}_landing",
        str(home / "checkpoints" / "landing_ingest" / f"{SCHEMA}_landing"),
        str(project_var("tenant_id_pattern")),
    )
    started = time.perf_counter()
    reports = ingest_landing(spark, settings, progress=lambda message: print("  " + message))
    ingest_seconds = time.perf_counter() - started
    staged = spark.table(f"{SCHEMA}_landing.records").count()
    assert staged == lines, f"staged {staged} of {lines} lines"
    print(
        f"  ingest step      {ingest_seconds:7.1f} s  {lines / ingest_seconds:10,.0f} lines/s  "
        f"{size / 1e6 / ingest_seconds:7.1f} MB/s  ({len(reports)} micro-batches)"
    )
    if skip_model:
        return

    from plumbing import run_dbt

    # dbt's session method picks up this process's SparkSession (same profile settings).
    run_dbt(["seed", "--select", "tenants"], target_path=home / "target")
    started = time.perf_counter()
    run_dbt(
        ["run", "--select", "stg_records__changes", "--vars", "{ingest_landing: false}"],
        target_path=home / "target",
    )
    model_seconds = time.perf_counter() - started
    judged = spark.sql(
        f"select count(*) as lines, count_if(is_accepted) as accepted "
        f"from {SCHEMA}_staging.stg_records__changes"
    ).first()
    assert judged["lines"] == lines, f"judged {judged['lines']} of {lines} lines"
    print(
        f"  staging model    {model_seconds:7.1f} s  {lines / model_seconds:10,.0f} lines/s  "
        f"{size / 1e6 / model_seconds:7.1f} MB/s  ({judged['accepted']:,} accepted)"
    )
    print(
        f"ratio staging model / ingest time: {model_seconds / ingest_seconds:.2f}x; "
        f"ingest + staging: {lines / (ingest_seconds + model_seconds):,.0f} lines/s"
    )


if __name__ == "__main__":
    main()
