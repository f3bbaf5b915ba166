"""Spark plumbing of a migration: a conversion to Delta in place, a shadow hydrated batch by batch
with lineage in each commit, quarantine, audit, publish, rollback, and the audit trail.

Decisions (preflight, batches, resume points, audit comparison) are in profile_lake.migration;
this module reads and writes tables. See docs/migration.md.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from profile_lake.migration import maintenance
from profile_lake.migration.contract import (
    Check,
    contract_checks,
    null_checked_columns,
    problems_sql,
)
from profile_lake.migration.convert import conversion_commit
from profile_lake.migration.lineage import BatchCommit, LogSnapshot, batch_commits, log_snapshot
from profile_lake.migration.plan import (
    AuditFacts,
    Batch,
    BatchState,
    Plan,
    Preflight,
    audit_differences,
    changed_files,
    files_to_scan,
    make_plan,
    preflight,
    resume_actions,
)
from profile_lake.migration.progress import Progress
from profile_lake.migration.source import Listing, fingerprints, list_source
from profile_lake.migration.state import MigrationFiles, MigrationState
from profile_lake.migration.trail import (
    QUARANTINE_DDL,
    QUARANTINE_TABLE,
    TRAIL_COLUMNS,
    TRAIL_DDL,
    TRAIL_TABLE,
    Step,
    trail_values,
)

PARTITION_INFERENCE = "spark.sql.sources.partitionColumnTypeInference.enabled"
PROBLEMS = "_problems"
FILE = "_source_file"
ROW = "_row_index"
TRAIL_FLUSH_SECONDS = 30.0  # a long step group writes its trail rows at least this often


class MigrationRefused(RuntimeError):
    """A step that would lose, duplicate or misreport a row, refused with what to do."""


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


@dataclass
class _PendingSteps:
    """Trail rows recorded inside a step group, written together when it ends."""

    steps: list[Step] = field(default_factory=list)
    depth: int = 0
    flushed_at: float = field(default_factory=time.monotonic)


@dataclass(frozen=True)
class Lake:
    """Where migrations keep their control tables (`<schema>_control`) and plans."""

    spark: SparkSession
    home: Path
    schema: str
    pending: _PendingSteps = field(default_factory=_PendingSteps, compare=False, repr=False)

    @property
    def control(self) -> str:
        return f"{self.schema}_control"

    @property
    def trail(self) -> str:
        return f"{self.control}.{TRAIL_TABLE}"

    @property
    def quarantine(self) -> str:
        return f"{self.control}.{QUARANTINE_TABLE}"

    def files(self, migration_id: str) -> MigrationFiles:
        return MigrationFiles(self.home, migration_id)

    def ensure_control_tables(self) -> None:
        self.spark.sql(f"create database if not exists {self.control}")
        for name, ddl in ((self.trail, TRAIL_DDL), (self.quarantine, QUARANTINE_DDL)):
            self.spark.sql(f"create table if not exists {name} ({ddl}) using delta")

    def record(self, step: Step) -> None:
        """A trail row: written now, or with its step group's (see `step_group`)."""
        self.pending.steps.append(step)
        if not self.pending.depth:
            self.flush_trail()

    def flush_trail(self) -> None:
        """Write the pending trail rows, in one commit."""
        steps, self.pending.steps[:] = list(self.pending.steps), []
        self.pending.flushed_at = time.monotonic()
        if steps:  # SQL values: no Python worker to start, as a DataFrame of rows would need
            values = ",\n".join(trail_values(step) for step in steps)
            self.spark.sql(f"insert into {self.trail} ({', '.join(TRAIL_COLUMNS)}) values {values}")

    def flush_trail_if_due(self) -> None:
        if time.monotonic() - self.pending.flushed_at >= TRAIL_FLUSH_SECONDS:
            self.flush_trail()

    @contextmanager
    def step_group(self) -> Iterator[None]:
        """Trail rows recorded inside are written when the outermost group ends (normally or
        by an error), in one commit: a Delta commit per row costs more than most steps."""
        self.pending.depth += 1
        try:
            yield
        finally:
            self.pending.depth -= 1
            if not self.pending.depth:
                self.flush_trail()

    def table_exists(self, name: str) -> bool:
        return bool(self.spark.catalog.tableExists(name))

    def table_location(self, target: str) -> Path:
        database, _, table = target.rpartition(".")
        warehouse = self.spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")
        return Path(warehouse) / f"{database or 'default'}.db" / table


def _uri(path: Path | str) -> str:
    return str(path).replace("`", "``")


@contextmanager
def _partition_values_as_strings(spark: SparkSession) -> Iterator[None]:
    """Read partition folders as strings (the plan types them, not Spark's inference, which
    would read `007` as 7)."""
    before = spark.conf.get(PARTITION_INFERENCE)
    spark.conf.set(PARTITION_INFERENCE, "false")
    try:
        yield
    finally:
        spark.conf.set(PARTITION_INFERENCE, before)


def key_hash(keys: Sequence[str]) -> F.Column:
    return F.xxhash64(*[F.col(f"`{key}`").cast("string") for key in keys])


def read_source(spark: SparkSession, plan: Plan, files: Sequence[str]) -> DataFrame:
    """The rows of `files` in the plan's target schema (a column later files added is null in
    earlier ones), with their file and row index."""
    root = plan.source_root
    # the plan's schema, given: no schema-merging job per batch, a column that later files
    # added is null in earlier ones, partition folders typed as planned
    schema = ", ".join(f"`{n}` {t}" for n, t in (*plan.columns, *plan.partition_columns))
    with _partition_values_as_strings(spark):
        frame = (
            spark.read.schema(schema)
            .option("basePath", root)
            .parquet(*[str(Path(root) / path) for path in files])
        )
        columns = [
            F.col(f"`{name}`").cast(kind).alias(name)
            for name, kind in (*plan.columns, *plan.partition_columns)
        ]
        prefix = "file:" + str(Path(root).resolve()) + "/"
        source_file = F.expr(f"substr(_metadata.file_path, {len(prefix) + 1})")
        return frame.select(
            *columns,
            source_file.alias(FILE),
            F.col("_metadata.row_index").alias(ROW),
        )


def checks_of(plan: Plan) -> list[Check]:
    names = [name for name, _ in (*plan.columns, *plan.partition_columns)]
    return contract_checks(plan.contract, plan.key_columns, names)


def with_problems(frame: DataFrame, checks: Sequence[Check]) -> DataFrame:
    return frame.withColumn(PROBLEMS, F.expr(problems_sql(checks)))


def quarantine_rows(plan: Plan, bad: DataFrame, batch_of_file: F.Column) -> DataFrame:
    """One row per problem of each bad row (ingest_errors' shape)."""
    data_columns = [name for name, _ in (*plan.columns, *plan.partition_columns)]
    return bad.select(
        F.lit(plan.migration_id).alias("migration_id"),
        batch_of_file.cast("bigint").alias("batch"),
        F.col(FILE).alias("source_file"),
        F.col(ROW).alias("row_index"),
        key_hash(plan.key_columns).alias("key_hash"),
        F.explode(PROBLEMS).alias("problem"),
        F.to_json(F.struct(*[F.col(f"`{name}`") for name in data_columns])).alias("row_json"),
        F.current_timestamp().alias("quarantined_at"),
    ).select(
        "migration_id",
        "batch",
        "source_file",
        "row_index",
        "key_hash",
        F.col("problem.error_code").alias("error_code"),
        F.col("problem.error_message").alias("error_message"),
        "row_json",
        F.col("quarantined_at").cast("timestamp"),
    )


def quarantined(
    lake: Lake, migration_id: str, batch: int | None = None
) -> tuple[dict[int, int], int]:
    """Quarantined rows per batch (of one batch, or all), and the sum of their key hashes (each
    row once)."""
    only = "" if batch is None else f" and batch = {int(batch)}"
    rows = lake.spark.sql(
        f"""
        select batch, count(*) as row_count, sum(cast(key_hash as decimal(38, 0))) as checksum
        from (
            select distinct batch, source_file, row_index, key_hash
            from {lake.quarantine}
            where migration_id = '{migration_id}'{only}
        )
        group by batch
        """
    ).collect()
    return (
        {int(row["batch"]): int(row["row_count"]) for row in rows},
        sum(int(row["checksum"] or 0) for row in rows),
    )


def checksum(frame: DataFrame, keys: Sequence[str]) -> tuple[int, int]:
    """(rows, sum of the key hashes): order-independent, so source and table compare."""
    row = frame.select(
        F.count(F.lit(1)).alias("rows"),
        F.sum(key_hash(keys).cast("decimal(38,0)")).alias("checksum"),
    ).first()
    return int(row["rows"]), int(row["checksum"] or 0)


def table_columns(spark: SparkSession, location: str) -> tuple[tuple[str, str], ...]:
    schema = spark.read.format("delta").load(location).schema
    return tuple((field.name, field.dataType.simpleString()) for field in schema)


# ---------------------------------------------------------------- preflight and plan


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


def _start(
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
    started = _now()
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
        _now(),
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


def _record(lake: Lake, plan: Plan, step: str, started: datetime, **fields: object) -> None:
    fields.setdefault("status", "ok")
    lake.record(
        Step(
            plan.migration_id,
            plan.source_table or plan.source_root,
            plan.strategy,
            step,
            started,
            _now(),
            **fields,  # type: ignore[arg-type]
        )
    )


# ---------------------------------------------------------------- shadow


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
    plan, _ = _start(
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
        + f"location '{_uri(location)}'"
    )
    files.save_state(MigrationState(phase="planned", table_location=str(location)))
    return plan


def batch_states(lake: Lake, plan: Plan, location: str) -> dict[int, BatchState]:
    """Each batch's shadow commit (the commit's userMetadata names its batch) and its
    quarantined rows."""
    commits = batch_commits(location, plan.migration_id)
    quarantine_counts, _ = quarantined(lake, plan.migration_id)
    return {
        batch.index: _batch_state(commits.get(batch.index), quarantine_counts.get(batch.index, 0))
        for batch in plan.batches
    }


def _batch_state(commit: BatchCommit | None, quarantined_rows: int) -> BatchState:
    if commit is None:
        return BatchState(None, 0, quarantined_rows)
    return BatchState(commit.version, commit.rows, quarantined_rows)


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
    started = _now()
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
    state = _batch_state(commit, 0)
    if state.migrated < batch.rows:
        # the rows the contract kept out of the commit; the audit counts the quarantine
        _write_quarantine(lake, plan, batch, frame)
        state = _batch_state(commit, batch.rows - state.migrated)
    _record(
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
    started = _now()
    location = lake.files(plan.migration_id).state().table_location
    changes = tuple(changed_files(plan.files, fingerprints(Path(plan.source_root))))
    if quarantined_rows is not None and plan.strategy == "in_place":
        states = {batch: BatchState(None, 0, rows) for batch, rows in quarantined_rows.items()}
        quarantined_sum = 0  # in place, no checksum is compared
    else:
        states, quarantined_sum = _batch_states_and_checksum(lake, plan, location)
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
    _record(
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


def _batch_states_and_checksum(
    lake: Lake, plan: Plan, location: str
) -> tuple[dict[int, BatchState], int]:
    """batch_states and the quarantine's checksum, from one query of the quarantine."""
    commits = batch_commits(location, plan.migration_id)
    counts, total = quarantined(lake, plan.migration_id)
    states = {
        batch.index: _batch_state(commits.get(batch.index), counts.get(batch.index, 0))
        for batch in plan.batches
    }
    return states, total


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


def last_step(lake: Lake, migration_id: str, step: str) -> dict | None:
    rows = (
        lake.spark.table(lake.trail)
        .where((F.col("migration_id") == migration_id) & (F.col("step") == step))
        .orderBy(F.col("ended_at").desc())
        .limit(1)
        .collect()
    )
    return rows[0].asDict() if rows else None


def _source_table_ddl(lake: Lake, source_table: str) -> str:
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


def _restore_source_table(lake: Lake, ddl: str, source_table: str, partitioned: bool) -> None:
    if ddl and not lake.table_exists(source_table):
        lake.spark.sql(ddl)
        if partitioned:
            lake.spark.sql(f"msck repair table {source_table}")


def publish(lake: Lake, plan: Plan) -> Path:
    """Switch the target name to the shadow, after a passed audit, with the source in
    maintenance; the source's files move aside (beside their folder) until collected."""
    started = _now()
    files = lake.files(plan.migration_id)
    state = files.state()
    root = Path(plan.source_root)
    audited = last_step(lake, plan.migration_id, "audit")

    def refuse(message: str) -> MigrationRefused:
        _record(lake, plan, "publish", started, status="refused", message=message)
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
        state.source_table_ddl = _source_table_ddl(lake, plan.source_table)
        files.save_state(state)
        lake.spark.sql(f"drop table {plan.source_table}")
    moved = root.with_name(f"{root.name}.migrated_{plan.migration_id}")
    root.rename(moved)
    state.moved_to, state.phase = str(moved), "published"
    files.save_state(state)
    lake.spark.sql(f"drop table if exists {shadow_name(plan.target)}")
    lake.spark.sql(
        f"create table {plan.target} using delta location '{_uri(state.table_location)}'"
    )
    maintenance.enter(moved, plan.migration_id, "published")
    _record(
        lake,
        plan,
        "publish",
        started,
        message=f"{plan.target} is the Delta table at {state.table_location}; the source's "
        f"files wait in {moved} for `profile-lake migrate collect`",
    )
    return moved


def rollback(lake: Lake, plan: Plan) -> str:
    """Undo the migration at whatever step it is: the source is left as it was (its files
    byte-identical, its name restored), the Delta table and the quarantined rows gone."""
    started = _now()
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
    _restore_source_table(
        lake, state.source_table_ddl, plan.source_table or "", bool(plan.partition_columns)
    )
    lake.spark.sql(f"delete from {lake.quarantine} where migration_id = '{plan.migration_id}'")
    message = f"rolled back from phase {state.phase}: {root} is as it was"
    _record(lake, plan, "rollback", started, message=message)
    files.retire(f"rolled_back_{started:%Y%m%dT%H%M%S}")
    return message


def collect(lake: Lake, plan: Plan) -> str:
    """Delete a published migration's old files (after which it cannot be rolled back)."""
    started = _now()
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
    _record(lake, plan, "collect", started, message=message)
    return message


# ---------------------------------------------------------------- in place


def remove_delta_log(root: Path) -> None:
    """What CONVERT TO DELTA (and a DELETE with deletion vectors) added to a folder."""
    shutil.rmtree(root / "_delta_log", ignore_errors=True)
    # the vectors, and the checksum files Hadoop's local file system writes beside them
    for vector in [*root.glob("deletion_vector_*.bin"), *root.glob(".deletion_vector_*.bin.crc")]:
        vector.unlink()


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
        plan, listing = _start(
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
    started = _now()
    if after_listing is not None:
        after_listing()
    try:
        write_conversion(root, plan)
    except MigrationRefused as error:  # a Delta log is there already: not ours to remove
        _record(lake, plan, "convert", started, status="refused", message=str(error))
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
        _record(lake, plan, "convert", started, status="refused", message=message)
        rollback(lake, plan)
        raise MigrationRefused(message)
    _record(lake, plan, "convert", started, rows_in=plan.rows, message=f"{len(converted)} files")
    differences = audit(lake, plan, _quarantine_in_place(lake, plan, root, listing))
    if not differences:
        if plan.source_table and lake.table_exists(plan.source_table):
            state.source_table_ddl = _source_table_ddl(lake, plan.source_table)
            files.save_state(state)
            lake.spark.sql(f"drop table {plan.source_table}")
        lake.spark.sql(
            f"create database if not exists {plan.target.rpartition('.')[0] or 'default'}"
        )
        lake.spark.sql(f"create table {plan.target} using delta location '{_uri(root)}'")
        state.phase = "published"
        files.save_state(state)
        maintenance.leave(root)
        message = f"{plan.target} is the Delta table at {root}"
        _record(lake, plan, "publish", _now(), message=message)
    return differences


def _quarantine_in_place(lake: Lake, plan: Plan, root: Path, listing: Listing) -> dict[int, int]:
    """Bad rows: copied to the quarantine, then marked deleted in the table (deletion vectors:
    a side file per data file, the data file itself untouched). Only the files the footers
    cannot clear are read (with the `keys` contract and no null in the key columns: none).
    Returns the quarantined rows per batch."""
    started = _now()
    checks = checks_of(plan)
    if not checks:
        return {}
    suspects = files_to_scan(listing.files, null_checked_columns(checks))
    if not suspects:
        _record(
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
        _record(lake, plan, "quarantine", started, rows_quarantined=0, message=message)
        return {}
    (
        quarantine_rows(plan, bad, mapping[F.col(FILE)])
        .write.format("delta")
        .mode("append")
        .saveAsTable(lake.quarantine)
    )
    lake.spark.sql(
        f"alter table delta.`{_uri(root)}` set tblproperties "
        "('delta.enableDeletionVectors' = 'true')"
    )
    predicate = f"size({problems_sql(checks)}) > 0"
    lake.spark.sql(f"delete from delta.`{_uri(root)}` where {predicate}")
    counts, _ = quarantined(lake, plan.migration_id)
    message = f"{len(suspects)} of {len(plan.files)} files read"
    _record(
        lake, plan, "quarantine", started, rows_quarantined=sum(counts.values()), message=message
    )
    return counts


def status(lake: Lake) -> list[dict]:
    lake.ensure_control_tables()
    return [row.asDict() for row in lake.spark.table(lake.trail).collect()]
