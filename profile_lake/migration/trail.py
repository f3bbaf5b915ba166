"""The audit trail: one row per migration step, so an operator sees where each migration
stands and why one stopped (`profile-lake migrate status`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime

from profile_lake.sql import sql_string

TRAIL_TABLE = "migration_steps"
QUARANTINE_TABLE = "migration_quarantine"
TRAIL_DDL = """
    migration_id string comment 'The migration (--id).',
    dataset string comment 'The source dataset (its folder, or its metastore table).',
    strategy string comment 'in_place or shadow.',
    step string comment 'preflight, convert, hydrate, quarantine, audit, publish, rollback...',
    batch bigint comment 'The source batch of a hydrate step (null for whole-dataset steps).',
    table_version bigint comment 'The table version the step committed, if any (lineage).',
    rows_in bigint comment 'Source rows the step read.',
    rows_out bigint comment 'Rows the step wrote to the table.',
    rows_quarantined bigint comment 'Rows the step quarantined.',
    started_at timestamp comment 'When the step started (UTC).',
    ended_at timestamp comment 'When the step ended (UTC).',
    status string comment 'ok, failed or refused.',
    message string comment 'What happened, or what to do.'
"""
TRAIL_COLUMNS = [line.split()[0] for line in TRAIL_DDL.strip().splitlines()]
QUARANTINE_DDL = """
    migration_id string comment 'The migration that quarantined the row.',
    batch bigint comment 'The source batch of the row.',
    source_file string comment 'The source file of the row, relative to the dataset.',
    row_index bigint comment '0-based row of the row in its file.',
    key_hash bigint comment 'xxhash64 of the key columns (the audit subtracts these).',
    error_code string comment 'The rule the row breaks (the codes of ingest_errors).',
    error_message string comment 'The field and its rule.',
    row_json string comment 'The row as JSON.',
    quarantined_at timestamp comment 'When it was quarantined (UTC).'
"""


@dataclass(frozen=True)
class Step:
    migration_id: str
    dataset: str
    strategy: str
    step: str
    started_at: datetime
    ended_at: datetime
    status: str
    message: str = ""
    batch: int | None = None
    table_version: int | None = None
    rows_in: int | None = None
    rows_out: int | None = None
    rows_quarantined: int | None = None

    def row(self) -> dict[str, object]:
        values = asdict(self)
        return {name: values[name] for name in TRAIL_COLUMNS}


def _literal(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, datetime):
        return f"timestamp'{value:%Y-%m-%d %H:%M:%S.%f}'"
    if isinstance(value, int):
        return str(value)
    return sql_string(str(value))


def trail_values(step: Step) -> str:
    """A trail row as a SQL values tuple, in TRAIL_COLUMNS' order (the trail is written with
    INSERT ... VALUES: no Python worker to start, as a DataFrame of Python rows needs)."""
    return "(" + ", ".join(_literal(value) for value in step.row().values()) + ")"


def standing(rows: Iterable[Mapping[str, object]]) -> list[str]:
    """One line per migration: its last step, status and message (rows in any order)."""
    last: dict[str, Mapping[str, object]] = {}
    for row in rows:
        key = str(row["migration_id"])
        ended = row["ended_at"]
        if key not in last or (ended is not None and ended >= last[key]["ended_at"]):  # type: ignore[operator]
            last[key] = row
    return [
        f"{key} ({row['strategy']}, {row['dataset']}): last step {row['step']}"
        + (f" batch {row['batch']}" if row["batch"] is not None else "")
        + f" {row['status']} at {row['ended_at']}"
        + (f": {row['message']}" if row["message"] else "")
        for key, row in sorted(last.items())
    ]
