"""Maintenance of a source dataset while a migration publishes it (or converts it in place).

A marker file in the dataset's folder names the migration; every writer of the lake's legacy
datasets (the migration command itself, and the writers that call `assert_writable`) refuses to
write there while it exists, with an error that names the migration.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

MARKER = "_profile_lake_maintenance.json"


class InMaintenance(RuntimeError):
    """A write to a dataset that a migration holds."""


def marker_path(root: Path) -> Path:
    return root / MARKER


def enter(root: Path, migration_id: str, step: str) -> None:
    marker_path(root).write_text(
        json.dumps(
            {"migration_id": migration_id, "step": step, "since": datetime.now(UTC).isoformat()}
        )
    )


def leave(root: Path) -> None:
    marker_path(root).unlink(missing_ok=True)


def holder(root: Path) -> dict[str, str] | None:
    path = marker_path(root)
    return json.loads(path.read_text()) if path.exists() else None


def refusal(root: Path, found: dict[str, str]) -> str:
    return (
        f"{root} is in maintenance: migration {found['migration_id']} is at step "
        f"{found['step']} since {found['since']}; writes are refused until it ends "
        f"(see `profile-lake migrate status`, or roll it back with "
        f"`profile-lake migrate rollback --id {found['migration_id']}`)"
    )


def assert_writable(root: Path, migration_id: str | None = None) -> None:
    """Raise InMaintenance naming the migration that holds `root` (unless it is `migration_id`)."""
    found = holder(root)
    if found is not None and found["migration_id"] != migration_id:
        raise InMaintenance(refusal(root, found))
