"""Lineage of a shadow table: which source batch (and files) each of its commits holds.

Each shadow commit carries its batch in Delta's `userMetadata` (DESCRIBE HISTORY shows it), and
its row count in `operationMetrics.numOutputRows`. They are read here from the table's log
files directly (JSON commits), without a Spark job: a resumed migration and every batch's
accounting need them, and a history query costs a job per call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


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
