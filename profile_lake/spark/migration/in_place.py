"""In place: the Delta log written beside the untouched data files (CONVERT TO DELTA's
commit, from the footers), bad rows quarantined and marked deleted by deletion vectors, the
footers' counts audited, the table registered; refused and undone when the source changes."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from profile_lake.migration import maintenance
from profile_lake.migration.contract import null_checked_columns, problems_sql
from profile_lake.migration.convert import conversion_commit
from profile_lake.migration.lineage import log_snapshot
from profile_lake.migration.plan import Plan, changed_files, files_to_scan
from profile_lake.migration.source import Listing, fingerprints
from profile_lake.migration.state import MigrationState
from profile_lake.spark.migration.audit import audit
from profile_lake.spark.migration.lake import Lake, MigrationRefused, now, record_step, uri
from profile_lake.spark.migration.preflight import start_migration
from profile_lake.spark.migration.publish import source_table_ddl
from profile_lake.spark.migration.rollback import rollback
from profile_lake.spark.migration.rows import (
    FILE,
    PROBLEMS,
    checks_of,
    quarantine_rows,
    quarantined,
    read_source,
    with_problems,
)


def in_place(
    lake: Lake,
    migration_id: str,
    source_root: Path,
    target: str,
    key_columns: Sequence[str],
    contract: dict[str, object],
    partition_types: dict[str, str] | None = None,
    source_table: str | None = None,
    after_listing: Callable[[], None] | None = None,
) -> list[str]:
    """Convert to Delta without rewriting a data file (CONVERT TO DELTA's commit, written from
    the footers), refused (and undone) when a file changes
    while it runs; bad rows are quarantined and marked deleted with deletion vectors (the data
    files stay byte-identical); then the footers' row count is audited against the table and
    the table registered under `target`. Returns the audit's differences (empty: done).
    Metadata work only unless the contract needs rows: the footers (read once) give the counts
    and clear the key columns' nulls; the trail is written once, at the end.
    `after_listing` runs between the listing and the conversion (where a writer that was not
    stopped would strike; the tests use it)."""
    files = lake.files(migration_id)
    if files.exists():
        raise MigrationRefused(
            f"migration {migration_id} exists: roll it back first "
            f"(`profile-lake migrate rollback --id {migration_id}`)"
        )
    with lake.step_group():
        plan, listing = start_migration(
            lake,
            migration_id,
            "in_place",
            source_root,
            target,
            key_columns,
            contract,
            partition_types,
            1 << 30,
            source_table,
        )
        return _convert_in_place(lake, plan, listing, after_listing)


def _convert_in_place(
    lake: Lake, plan: Plan, listing: Listing, after_listing: Callable[[], None] | None
) -> list[str]:
    files = lake.files(plan.migration_id)
    root = Path(plan.source_root)
    files.save_state(MigrationState(phase="planned", table_location=str(root)))
    maintenance.enter(root, plan.migration_id, "convert")
    started = now()
    if after_listing is not None:
        after_listing()
    try:
        write_conversion(root, plan)
    except MigrationRefused as error:  # a Delta log is there already: not ours to remove
        record_step(lake, plan, "convert", started, status="refused", message=str(error))
        maintenance.leave(root)
        files.retire(f"refused_{started:%Y%m%dT%H%M%S}")
        raise
    state = files.state()
    state.phase = "converted"
    files.save_state(state)
    converted = _converted_files(lake.spark, root)
    changes = changed_files(plan.files, fingerprints(root))
    changes += [f"{path} was added" for path in sorted(converted - set(plan.files))]
    changes += [f"{path} is missing" for path in sorted(set(plan.files) - converted)]
    if changes:
        message = (
            "in-place migration refused: the source changed while it ran: "
            + "; ".join(sorted(set(changes)))
            + ". Stop its writers and migrate again (the conversion was undone)."
        )
        record_step(lake, plan, "convert", started, status="refused", message=message)
        rollback(lake, plan)
        raise MigrationRefused(message)
    record_step(
        lake, plan, "convert", started, rows_in=plan.rows, message=f"{len(converted)} files"
    )
    differences = audit(lake, plan, _quarantine_in_place(lake, plan, root, listing))
    if not differences:
        if plan.source_table and lake.table_exists(plan.source_table):
            state.source_table_ddl = source_table_ddl(lake, plan.source_table)
            files.save_state(state)
            lake.spark.sql(f"drop table {plan.source_table}")
        lake.spark.sql(
            f"create database if not exists {plan.target.rpartition('.')[0] or 'default'}"
        )
        lake.spark.sql(f"create table {plan.target} using delta location '{uri(root)}'")
        state.phase = "published"
        files.save_state(state)
        maintenance.leave(root)
        message = f"{plan.target} is the Delta table at {root}"
        record_step(lake, plan, "publish", now(), message=message)
    return differences


def write_conversion(root: Path, plan: Plan) -> None:
    """Version 0 of the Delta log beside the data files (CONVERT TO DELTA's commit, from the
    footers: see profile_lake.migration.convert), written under a hidden name and linked into
    place, so a reader sees all of it or nothing, and a table already there is refused."""
    log = root / "_delta_log"
    log.mkdir(exist_ok=True)
    first = log / f"{0:020d}.json"
    hidden = log / f".{first.name}.{plan.migration_id}.tmp"
    hidden.write_text(conversion_commit(plan, int(time.time() * 1000)))
    try:
        os.link(hidden, first)
    except FileExistsError:
        raise MigrationRefused(
            f"{root} is already a Delta table ({first} exists): migrate it no further"
        ) from None
    finally:
        hidden.unlink()


def _converted_files(spark: SparkSession, root: Path) -> set[str]:
    """The data files of the converted table: from its log, or (a checkpoint) from Spark."""
    snapshot = log_snapshot(root)
    if snapshot is not None:
        return set(snapshot.files)
    prefix = "file://" + str(root) + "/"
    return {
        path.replace("file:///", "file:/").removeprefix(prefix.replace("file:///", "file:/"))
        for path in spark.read.format("delta").load(str(root)).inputFiles()
    }


def _quarantine_in_place(lake: Lake, plan: Plan, root: Path, listing: Listing) -> dict[int, int]:
    """Bad rows: copied to the quarantine, then marked deleted in the table (deletion vectors:
    a side file per data file, the data file itself untouched). Only the files the footers
    cannot clear are read (with the `keys` contract and no null in the key columns: none).
    Returns the quarantined rows per batch."""
    started = now()
    checks = checks_of(plan)
    if not checks:
        return {}
    suspects = files_to_scan(listing.files, null_checked_columns(checks))
    if not suspects:
        record_step(
            lake,
            plan,
            "quarantine",
            started,
            rows_quarantined=0,
            message="the footers count no null in the key columns: no row read",
        )
        return {}
    # the files themselves (Delta's _metadata has no row index), as the plan reads them
    judged = with_problems(read_source(lake.spark, plan, suspects), checks)
    batch_of = {path: batch.index for batch in plan.batches for path in batch.files}
    mapping = F.create_map(*[F.lit(x) for pair in batch_of.items() for x in pair])
    bad = judged.where(F.size(PROBLEMS) > 0)
    if bad.limit(1).count() == 0:
        message = f"{len(suspects)} of {len(plan.files)} files read: no bad row"
        record_step(lake, plan, "quarantine", started, rows_quarantined=0, message=message)
        return {}
    (
        quarantine_rows(plan, bad, mapping[F.col(FILE)])
        .write.format("delta")
        .mode("append")
        .saveAsTable(lake.quarantine)
    )
    lake.spark.sql(
        f"alter table delta.`{uri(root)}` set tblproperties "
        "('delta.enableDeletionVectors' = 'true')"
    )
    predicate = f"size({problems_sql(checks)}) > 0"
    lake.spark.sql(f"delete from delta.`{uri(root)}` where {predicate}")
    counts, _ = quarantined(lake, plan.migration_id)
    message = f"{len(suspects)} of {len(plan.files)} files read"
    record_step(
        lake, plan, "quarantine", started, rows_quarantined=sum(counts.values()), message=message
    )
    return counts
