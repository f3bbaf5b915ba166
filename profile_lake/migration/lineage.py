"""Lineage of a shadow table: which source batch (and files) each of its commits holds; and a
converted table's files and schema, replayed from its log.

Each shadow commit carries its batch in Delta's `userMetadata` (DESCRIBE HISTORY shows it), and
its row count in `operationMetrics.numOutputRows`. They are read here from the table's log
files directly (JSON commits), without a Spark job: a resumed migration and every batch's
accounting need them, and a history query costs a job per call.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote


@dataclass(frozen=True)
class BatchCommit:
    version: int
    batch: int
    rows: int
    files: tuple[str, ...]


def parse_commit(version: int, text: str, migration_id: str) -> BatchCommit | None:
    """The batch a commit file (one JSON action a line) holds for `migration_id`, if any."""
    for line in text.splitlines():
        if not line.startswith('{"commitInfo"'):
            continue
        info = json.loads(line)["commitInfo"]
        meta = info.get("userMetadata")
        if not meta:
            return None
        lineage = json.loads(meta)
        if lineage.get("migration") != migration_id or "batch" not in lineage:
            return None
        rows = int((info.get("operationMetrics") or {}).get("numOutputRows", 0))
        return BatchCommit(version, int(lineage["batch"]), rows, tuple(lineage.get("files", ())))
    return None


def batch_commits(table_location: Path | str, migration_id: str) -> dict[int, BatchCommit]:
    """Every batch committed to the table by the migration, by batch index."""
    log = Path(table_location) / "_delta_log"
    found: dict[int, BatchCommit] = {}
    for path in sorted(log.glob("[0-9]*.json")) if log.is_dir() else ():
        commit = parse_commit(int(path.stem), path.read_text(), migration_id)
        if commit is not None:
            found.setdefault(commit.batch, commit)
    return found


# Delta's JSON schema types, as Spark's simpleString prints them (the plan's type names).
_DELTA_TYPES = {"long": "bigint", "integer": "int", "short": "smallint", "byte": "tinyint"}
_SIMPLE = {"string", "boolean", "double", "float", "date", "timestamp", "timestamp_ntz", "binary"}


@dataclass(frozen=True)
class LogSnapshot:
    """A table's current data files and schema, replayed from its JSON commits."""

    files: dict[str, int]  # data file (relative to the table, decoded) -> rows deleted by its DV
    columns: tuple[tuple[str, str], ...] | None  # (name, Spark type); None: a type not replayed

    @property
    def deleted_rows(self) -> int:
        return sum(self.files.values())


def spark_type_of(delta_type: object) -> str | None:
    """A Delta schema type (JSON) as Spark's simpleString; None for structs and maps."""
    if isinstance(delta_type, str):
        if delta_type in _SIMPLE or delta_type.startswith("decimal("):
            return delta_type.replace(" ", "")
        return _DELTA_TYPES.get(delta_type)
    if isinstance(delta_type, dict) and delta_type.get("type") == "array":
        inner = spark_type_of(delta_type.get("elementType"))
        return None if inner is None else f"array<{inner}>"
    return None


def _relative(path: str, table_location: Path) -> str:
    decoded = unquote(path)
    if decoded.startswith("file:"):
        decoded = "/" + decoded.removeprefix("file:").lstrip("/")
        return os.path.relpath(decoded, table_location)
    return decoded


def log_snapshot(table_location: Path | str) -> LogSnapshot | None:
    """The table's files (with their deletion vectors' row counts) and schema, from its JSON
    commits: no Spark job. None when the log has a checkpoint (Parquet; ask Spark instead) or
    no commit."""
    location = Path(table_location)
    log = location / "_delta_log"
    commits = sorted(log.glob("[0-9]*.json")) if log.is_dir() else []
    if not commits or (log / "_last_checkpoint").exists() or any(log.glob("*.checkpoint*")):
        return None
    files: dict[str, int] = {}
    schema: str | None = None
    for path in commits:
        for line in path.read_text().splitlines():
            action = json.loads(line) if line.strip() else {}
            if "add" in action:
                vector = action["add"].get("deletionVector") or {}
                files[_relative(action["add"]["path"], location)] = int(
                    vector.get("cardinality", 0)
                )
            elif "remove" in action:
                files.pop(_relative(action["remove"]["path"], location), None)
            elif "metaData" in action:
                schema = action["metaData"]["schemaString"]
    columns: tuple[tuple[str, str], ...] | None = None
    if schema is not None:
        fields = json.loads(schema)["fields"]
        found = [(column["name"], spark_type_of(column["type"])) for column in fields]
        if all(kind is not None for _, kind in found):
            columns = tuple((name, str(kind)) for name, kind in found)
    return LogSnapshot(files, columns)
