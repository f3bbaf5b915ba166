"""The audit: counts per batch and in total, the schema, and a key checksum of the source
(less its quarantined rows) against the table; what each batch holds (its shadow commit, its
quarantined rows)."""

from __future__ import annotations

from pathlib import Path

from profile_lake.migration.lineage import BatchCommit, LogSnapshot, batch_commits, log_snapshot
from profile_lake.migration.plan import (
    AuditFacts,
    BatchState,
    Plan,
    audit_differences,
    changed_files,
)
from profile_lake.migration.source import fingerprints
from profile_lake.spark.migration.lake import Lake, now, record_step
from profile_lake.spark.migration.rows import checksum, quarantined, read_source, table_columns


def batch_states(lake: Lake, plan: Plan, location: str) -> dict[int, BatchState]:
    """Each batch's shadow commit (the commit's userMetadata names its batch) and its
    quarantined rows."""
    commits = batch_commits(location, plan.migration_id)
    quarantine_counts, _ = quarantined(lake, plan.migration_id)
    return {
        batch.index: batch_state(commits.get(batch.index), quarantine_counts.get(batch.index, 0))
        for batch in plan.batches
    }


def batch_state(commit: BatchCommit | None, quarantined_rows: int) -> BatchState:
    if commit is None:
        return BatchState(None, 0, quarantined_rows)
    return BatchState(commit.version, commit.rows, quarantined_rows)


def batch_states_and_checksum(
    lake: Lake, plan: Plan, location: str
) -> tuple[dict[int, BatchState], int]:
    """batch_states and the quarantine's checksum, from one query of the quarantine."""
    commits = batch_commits(location, plan.migration_id)
    counts, total = quarantined(lake, plan.migration_id)
    states = {
        batch.index: batch_state(commits.get(batch.index), counts.get(batch.index, 0))
        for batch in plan.batches
    }
    return states, total


def audit(lake: Lake, plan: Plan, quarantined_rows: dict[int, int] | None = None) -> list[str]:
    """Counts per batch and in total, the schema, and a checksum over the key columns of the
    source (less the quarantined rows) against the table. Returns the differences (empty: the
    audit passed) and records them in the trail.

    Shadow: the source's checksum is what each batch's hydration measured of the rows it read
    (a batch without one, after a kill, is read again here); the table's key columns are read
    once. In place: the table's files are the source's, so its rows are counted from metadata:
    the log's files must be the planned ones, unchanged since their footers were read, less
    the rows their deletion vectors remove. `quarantined_rows` (per batch): what the in-place
    run's own quarantine step just wrote, instead of a query of the quarantine table."""
    started = now()
    location = lake.files(plan.migration_id).state().table_location
    changes = tuple(changed_files(plan.files, fingerprints(Path(plan.source_root))))
    if quarantined_rows is not None and plan.strategy == "in_place":
        states = {batch: BatchState(None, 0, rows) for batch, rows in quarantined_rows.items()}
        quarantined_sum = 0  # in place, no checksum is compared
    else:
        states, quarantined_sum = batch_states_and_checksum(lake, plan, location)
    snapshot = log_snapshot(location)
    if plan.strategy == "shadow":
        table = lake.spark.read.format("delta").load(location)
        table_rows, table_sum = checksum(table, plan.key_columns)
        source_sum = _source_checksum(lake, plan)
    else:
        table_rows, table_sum, source_sum = _in_place_rows(lake, plan, snapshot, location), 0, 0
    columns = snapshot.columns if snapshot is not None else None
    facts = AuditFacts(
        states,
        table_rows,
        columns or table_columns(lake.spark, location),
        source_sum,
        quarantined_sum,
        table_sum,
        changes,
    )
    differences = audit_differences(plan, facts)
    record_step(
        lake,
        plan,
        "audit",
        started,
        status="ok" if not differences else "failed",
        rows_in=plan.rows,
        rows_out=table_rows,
        rows_quarantined=sum(state.quarantined for state in states.values()),
        message="; ".join(differences) or "table = source less quarantined rows",
    )
    return differences


def _source_checksum(lake: Lake, plan: Plan) -> int:
    """The key checksum of every source row: measured by the hydration, batch by batch; the
    batches it did not measure (a run killed between a commit and its measure) read here."""
    measured = lake.files(plan.migration_id).checksums()
    unmeasured = [
        path for batch in plan.batches if batch.index not in measured for path in batch.files
    ]
    total = sum(value for batch, (_, value) in measured.items() if batch < len(plan.batches))
    if unmeasured:
        total += checksum(read_source(lake.spark, plan, unmeasured), plan.key_columns)[1]
    return total


def _in_place_rows(lake: Lake, plan: Plan, snapshot: LogSnapshot | None, location: str) -> int:
    """A converted table's rows from metadata when its log lists exactly the planned files
    (their footers' counts less the deletion vectors'); else counted by Spark."""
    if snapshot is None or set(snapshot.files) != set(plan.files):
        return int(lake.spark.read.format("delta").load(location).count())
    return sum(plan.files[path][2] for path in snapshot.files) - snapshot.deleted_rows
