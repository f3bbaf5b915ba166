"""The shadow: a new Delta table hydrated batch by batch, each commit idempotent and naming
its batch and files (lineage), bad rows to the quarantine, a killed run resumed at the first
batch not committed."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F

from profile_lake.migration import maintenance
from profile_lake.migration.contract import Check
from profile_lake.migration.lineage import batch_commits
from profile_lake.migration.plan import Batch, BatchState, Plan, resume_actions
from profile_lake.migration.progress import Progress
from profile_lake.migration.state import MigrationState
from profile_lake.spark.migration.audit import batch_state, batch_states
from profile_lake.spark.migration.lake import Lake, now, record_step, uri
from profile_lake.spark.migration.preflight import start_migration
from profile_lake.spark.migration.rows import (
    PROBLEMS,
    checks_of,
    key_hash,
    quarantine_rows,
    read_source,
    with_problems,
)


def shadow_name(target: str) -> str:
    return f"{target}__shadow"


def start_shadow(
    lake: Lake,
    migration_id: str,
    source_root: Path,
    target: str,
    key_columns: Sequence[str],
    contract: dict[str, object],
    partition_types: dict[str, str] | None = None,
    max_files_per_batch: int = 64,
    source_table: str | None = None,
    min_batch_bytes: int = 0,
) -> Plan:
    """A new shadow migration (or the one of this id, resumed): its plan and its empty table.
    A batch is a partition (or up to `max_files_per_batch` of its files); with
    `min_batch_bytes`, small consecutive partitions share a batch."""
    files = lake.files(migration_id)
    if files.exists():
        plan = files.plan()
        print(f"resuming migration {migration_id}: {len(plan.batches)} batches planned", flush=True)
        return plan
    plan, _ = start_migration(
        lake,
        migration_id,
        "shadow",
        source_root,
        target,
        key_columns,
        contract,
        partition_types,
        max_files_per_batch,
        source_table,
        min_batch_bytes,
    )
    location = lake.table_location(target)
    columns = ", ".join(f"`{n}` {t}" for n, t in (*plan.columns, *plan.partition_columns))
    partitioned = ", ".join(f"`{n}`" for n, _ in plan.partition_columns)
    database = target.rpartition(".")[0] or "default"
    lake.spark.sql(f"create database if not exists {database}")
    lake.spark.sql(
        f"create table if not exists {shadow_name(target)} ({columns}) using delta "
        + (f"partitioned by ({partitioned}) " if partitioned else "")
        + f"location '{uri(location)}'"
    )
    files.save_state(MigrationState(phase="planned", table_location=str(location)))
    return plan


def _lineage(plan: Plan, batch: Batch) -> str:
    return json.dumps(
        {
            "migration": plan.migration_id,
            "batch": batch.index,
            "partition": batch.label,
            "files": list(batch.files),
        }
    )


def _write_quarantine(lake: Lake, plan: Plan, batch: Batch, frame: DataFrame) -> None:
    bad = frame.where(F.size(PROBLEMS) > 0)
    rows = quarantine_rows(plan, bad, F.lit(batch.index))
    (
        rows.write.format("delta")
        .mode("append")
        .option("txnAppId", f"{plan.migration_id}:quarantine")
        .option("txnVersion", batch.index)
        .saveAsTable(lake.quarantine)
    )


def hydrate(lake: Lake, plan: Plan, pause_seconds: float = 0.0) -> dict[int, BatchState]:
    """Write every batch not yet in the shadow, one commit per batch (idempotent: Delta skips a
    (txnAppId, txnVersion) it has committed, so a batch replayed after a kill is not written
    twice); then its bad rows to the quarantine. Resumes where a killed run stopped. The
    batches' trail rows are written together (at least every TRAIL_FLUSH_SECONDS)."""
    files = lake.files(plan.migration_id)
    location = files.state().table_location
    maintenance.assert_writable(Path(plan.source_root), plan.migration_id)
    states = batch_states(lake, plan, location)
    actions = resume_actions(plan.batches, states)
    committed = sum(state.committed_version is not None for state in states.values())
    if committed:
        unfinished = sum(action.quarantine_only for action in actions)
        print(
            f"{committed} batches already committed"
            + (f" ({unfinished} of them without all their quarantined rows)" if unfinished else ""),
            flush=True,
        )
    checks = checks_of(plan)
    progress = Progress("hydrate", len(actions))
    with lake.step_group():
        for action in actions:
            _hydrate_batch(lake, plan, location, action.batch, action.hydrate, checks)
            progress.advance(action.batch.rows)
            lake.flush_trail_if_due()
            if pause_seconds:
                time.sleep(pause_seconds)
    current = files.state()
    current.phase = "hydrated"
    files.save_state(current)
    return batch_states(lake, plan, location)


def _observed(observation: Observation, wait_seconds: float = 30.0) -> dict | None:
    """An observation's metrics once its query has reported them (a listener sets them just
    after the write returns), or None after `wait_seconds`: Observation.get would block for
    ever on a query that did not run (the audit then reads the batch's keys itself)."""
    deadline = time.monotonic() + wait_seconds
    future = observation._jo.future() if observation._jo is not None else None
    while future is not None and time.monotonic() < deadline:
        if future.isCompleted():
            return observation.get
        time.sleep(0.02)
    return None


def _hydrate_batch(
    lake: Lake, plan: Plan, location: str, batch: Batch, write: bool, checks: Sequence[Check]
) -> None:
    """One batch: its good rows in one commit with its lineage, then its bad rows to the
    quarantine. The write also measures the batch's source rows and key checksum (an
    observation of the rows it reads: no second read), kept for the audit."""
    started = now()
    data_columns = [name for name, _ in (*plan.columns, *plan.partition_columns)]
    frame = with_problems(read_source(lake.spark, plan, batch.files), checks)
    measured = Observation()
    if write:
        (
            frame.observe(
                measured,
                F.count(F.lit(1)).alias("rows"),
                F.sum(key_hash(plan.key_columns).cast("decimal(38,0)")).alias("checksum"),
            )
            .where(F.size(PROBLEMS) == 0)
            .select(*data_columns)
            .write.format("delta")
            .mode("append")
            .option("txnAppId", plan.migration_id)
            .option("txnVersion", batch.index)
            .option("userMetadata", _lineage(plan, batch))
            .save(location)
        )
    commit = batch_commits(location, plan.migration_id).get(batch.index)
    values = _observed(measured) if write and commit is not None else None
    if values is not None:
        lake.files(plan.migration_id).save_checksum(
            batch.index, int(values["rows"]), int(values["checksum"] or 0)
        )
    state = batch_state(commit, 0)
    if state.migrated < batch.rows:
        # the rows the contract kept out of the commit; the audit counts the quarantine
        _write_quarantine(lake, plan, batch, frame)
        state = batch_state(commit, batch.rows - state.migrated)
    record_step(
        lake,
        plan,
        "hydrate",
        started,
        batch=batch.index,
        table_version=state.committed_version,
        rows_in=batch.rows,
        rows_out=state.migrated,
        rows_quarantined=state.quarantined,
        message=f"{batch.label}: {len(batch.files)} files",
    )
