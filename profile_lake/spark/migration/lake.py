"""The lake a migration works in: its control tables (the audit trail and the quarantine),
its plans and phases under PROFILE_LAKE_HOME, and the trail rows its steps record."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from profile_lake.migration.plan import Plan
from profile_lake.migration.state import MigrationFiles
from profile_lake.migration.trail import (
    QUARANTINE_DDL,
    QUARANTINE_TABLE,
    TRAIL_COLUMNS,
    TRAIL_DDL,
    TRAIL_TABLE,
    Step,
    trail_values,
)

TRAIL_FLUSH_SECONDS = 30.0  # a long step group writes its trail rows at least this often


class MigrationRefused(RuntimeError):
    """A step that would lose, duplicate or misreport a row, refused with what to do."""


def now() -> datetime:
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


def uri(path: Path | str) -> str:
    """A path for SQL (delta.`<path>`, location '<path>'): its backquotes doubled."""
    return str(path).replace("`", "``")


def record_step(lake: Lake, plan: Plan, step: str, started: datetime, **fields: object) -> None:
    """A trail row for a step of the plan's migration, from `started` to now (status ok unless
    given)."""
    fields.setdefault("status", "ok")
    lake.record(
        Step(
            plan.migration_id,
            plan.source_table or plan.source_root,
            plan.strategy,
            step,
            started,
            now(),
            **fields,  # type: ignore[arg-type]
        )
    )


def last_step(lake: Lake, migration_id: str, step: str) -> dict | None:
    rows = (
        lake.spark.table(lake.trail)
        .where((F.col("migration_id") == migration_id) & (F.col("step") == step))
        .orderBy(F.col("ended_at").desc())
        .limit(1)
        .collect()
    )
    return rows[0].asDict() if rows else None


def status(lake: Lake) -> list[dict]:
    """Every row of the audit trail."""
    lake.ensure_control_tables()
    return [row.asDict() for row in lake.spark.table(lake.trail).collect()]
