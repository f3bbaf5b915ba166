"""The first step of every migration: the preflight (footers, one schema, partitions, keys,
the target free), recorded in the trail, then the plan, saved before any row moves."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from profile_lake.migration import maintenance
from profile_lake.migration.plan import Plan, Preflight, make_plan, preflight
from profile_lake.migration.source import Listing, list_source
from profile_lake.migration.trail import Step
from profile_lake.spark.migration.lake import Lake, MigrationRefused, now


def run_preflight(
    lake: Lake,
    source_root: Path,
    target: str,
    key_columns: Sequence[str],
    partition_types: dict[str, str] | None = None,
    source_table: str | None = None,
) -> tuple[Listing, Preflight]:
    listing = list_source(source_root)
    taken = lake.table_exists(target) and target != source_table
    report = preflight(listing, partition_types, key_columns, target if taken else None)
    location = lake.table_location(target)
    if not taken and location.exists() and location.resolve() != source_root.resolve():
        report = Preflight(
            report.files,
            report.rows,
            report.bytes,
            report.partition_columns,
            report.schema,
            (*report.problems, f"target location {location} is not empty: remove it"),
        )
    return listing, report


def start_migration(
    lake: Lake,
    migration_id: str,
    strategy: str,
    source_root: Path,
    target: str,
    key_columns: Sequence[str],
    contract: dict[str, object],
    partition_types: dict[str, str] | None,
    max_files_per_batch: int,
    source_table: str | None,
    min_batch_bytes: int = 0,
) -> tuple[Plan, Listing]:
    """Preflight, then the plan (saved before any row moves); a refused preflight is a trail
    row and an error listing every problem. The listing (every footer, read once) comes back
    for the steps that need more of the footers than the plan keeps."""
    lake.ensure_control_tables()
    found = maintenance.holder(source_root)
    if found is not None and found["migration_id"] != migration_id:
        raise maintenance.InMaintenance(maintenance.refusal(source_root, found))
    started = now()
    listing, report = run_preflight(
        lake, source_root, target, key_columns, partition_types, source_table
    )
    print(report.describe(), flush=True)
    step = Step(
        migration_id,
        str(source_table or source_root),
        strategy,
        "preflight",
        started,
        now(),
        "ok" if report.ok else "refused",
        "" if report.ok else "; ".join(report.problems),
        rows_in=report.rows,
    )
    lake.record(step)
    if not report.ok:
        raise MigrationRefused(report.describe())
    plan = make_plan(
        migration_id,
        strategy,
        str(source_root.resolve()),
        target,
        listing,
        report,
        key_columns,
        max_files_per_batch,
        contract,
        source_table,
        min_batch_bytes,
    )
    lake.files(migration_id).save_plan(plan)
    return plan, listing
