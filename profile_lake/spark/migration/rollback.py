"""Rollback: undo a migration at whatever step it is, leaving the source as it was."""

from __future__ import annotations

import shutil
from pathlib import Path

from profile_lake.migration import maintenance
from profile_lake.migration.plan import Plan
from profile_lake.spark.migration.lake import Lake, MigrationRefused, now, record_step
from profile_lake.spark.migration.publish import restore_source_table
from profile_lake.spark.migration.shadow import shadow_name


def rollback(lake: Lake, plan: Plan) -> str:
    """Undo the migration at whatever step it is: the source is left as it was (its files
    byte-identical, its name restored), the Delta table and the quarantined rows gone."""
    started = now()
    files = lake.files(plan.migration_id)
    state = files.state()
    root = Path(plan.source_root)
    if state.phase == "collected":
        raise MigrationRefused(
            f"migration {plan.migration_id} cannot be rolled back: its source's files were "
            "collected"
        )
    if state.phase == "published" and plan.strategy == "shadow":
        moved = Path(state.moved_to)
        lake.spark.sql(f"drop table if exists {plan.target}")
        moved.rename(root)
    if plan.strategy == "shadow":
        lake.spark.sql(f"drop table if exists {shadow_name(plan.target)}")
        if state.table_location:
            shutil.rmtree(state.table_location, ignore_errors=True)
    else:
        # the target name is the migration's unless it is still the source's own registration
        renamed = plan.target != plan.source_table or state.phase == "published"
        if renamed and lake.table_exists(plan.target):
            lake.spark.sql(f"drop table {plan.target}")
        remove_delta_log(root)
    maintenance.leave(root)
    restore_source_table(
        lake, state.source_table_ddl, plan.source_table or "", bool(plan.partition_columns)
    )
    lake.spark.sql(f"delete from {lake.quarantine} where migration_id = '{plan.migration_id}'")
    message = f"rolled back from phase {state.phase}: {root} is as it was"
    record_step(lake, plan, "rollback", started, message=message)
    files.retire(f"rolled_back_{started:%Y%m%dT%H%M%S}")
    return message


def remove_delta_log(root: Path) -> None:
    """What CONVERT TO DELTA (and a DELETE with deletion vectors) added to a folder."""
    shutil.rmtree(root / "_delta_log", ignore_errors=True)
    # the vectors, and the checksum files Hadoop's local file system writes beside them
    for vector in [*root.glob("deletion_vector_*.bin"), *root.glob(".deletion_vector_*.bin.crc")]:
        vector.unlink()
