"""Publish (the target name switched to the audited shadow, the source moved aside, in
maintenance) and collect (the moved source deleted, after which no rollback)."""

from __future__ import annotations

import shutil
from pathlib import Path

from profile_lake.migration import maintenance
from profile_lake.migration.plan import Plan, changed_files
from profile_lake.migration.source import fingerprints
from profile_lake.spark.migration.lake import (
    Lake,
    MigrationRefused,
    last_step,
    now,
    record_step,
    uri,
)
from profile_lake.spark.migration.shadow import shadow_name


def source_table_ddl(lake: Lake, source_table: str) -> str:
    detail = {
        row["col_name"]: row["data_type"]
        for row in lake.spark.sql(f"describe table extended {source_table}").collect()
    }
    if detail.get("Type", "").upper() != "EXTERNAL":
        raise MigrationRefused(
            f"{source_table} is a managed table: dropping its name would delete its files. "
            "Make it external first (ALTER TABLE ... SET TBLPROPERTIES ('EXTERNAL'='TRUE'))."
        )
    return str(lake.spark.sql(f"show create table {source_table}").first()[0])


def restore_source_table(lake: Lake, ddl: str, source_table: str, partitioned: bool) -> None:
    if ddl and not lake.table_exists(source_table):
        lake.spark.sql(ddl)
        if partitioned:
            lake.spark.sql(f"msck repair table {source_table}")


def publish(lake: Lake, plan: Plan) -> Path:
    """Switch the target name to the shadow, after a passed audit, with the source in
    maintenance; the source's files move aside (beside their folder) until collected."""
    started = now()
    files = lake.files(plan.migration_id)
    state = files.state()
    root = Path(plan.source_root)
    audited = last_step(lake, plan.migration_id, "audit")

    def refuse(message: str) -> MigrationRefused:
        record_step(lake, plan, "publish", started, status="refused", message=message)
        return MigrationRefused(message)

    if state.phase == "published":
        raise refuse(f"migration {plan.migration_id} is already published")
    if audited is None or audited["status"] != "ok":
        reason = "it has no audit" if audited is None else f"its audit failed: {audited['message']}"
        raise refuse(
            f"publish of {plan.migration_id} refused: {reason}. Run `profile-lake migrate "
            "audit`, fix what differs (or roll back), then publish."
        )
    maintenance.enter(root, plan.migration_id, "publish")
    changes = changed_files(plan.files, fingerprints(root))
    if changes:
        maintenance.leave(root)
        raise refuse(
            f"publish of {plan.migration_id} refused: the source changed after it was read: "
            + "; ".join(changes)
            + ". Roll back and migrate again."
        )
    if plan.source_table and lake.table_exists(plan.source_table):
        state.source_table_ddl = source_table_ddl(lake, plan.source_table)
        files.save_state(state)
        lake.spark.sql(f"drop table {plan.source_table}")
    moved = root.with_name(f"{root.name}.migrated_{plan.migration_id}")
    root.rename(moved)
    state.moved_to, state.phase = str(moved), "published"
    files.save_state(state)
    lake.spark.sql(f"drop table if exists {shadow_name(plan.target)}")
    lake.spark.sql(f"create table {plan.target} using delta location '{uri(state.table_location)}'")
    maintenance.enter(moved, plan.migration_id, "published")
    record_step(
        lake,
        plan,
        "publish",
        started,
        message=f"{plan.target} is the Delta table at {state.table_location}; the source's "
        f"files wait in {moved} for `profile-lake migrate collect`",
    )
    return moved


def collect(lake: Lake, plan: Plan) -> str:
    """Delete a published migration's old files (after which it cannot be rolled back)."""
    started = now()
    files = lake.files(plan.migration_id)
    state = files.state()
    if state.phase != "published" or not state.moved_to:
        raise MigrationRefused(
            f"migration {plan.migration_id} is not published: nothing to collect"
        )
    shutil.rmtree(state.moved_to)
    state.phase = "collected"
    files.save_state(state)
    message = f"deleted {state.moved_to}"
    record_step(lake, plan, "collect", started, message=message)
    return message
