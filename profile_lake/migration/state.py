"""Where a migration's plan and phase are kept: `PROFILE_LAKE_HOME/migrations/<id>/`.

The plan (plan.json) is written once, before any row moves, so a resumed run follows the same
batches; the phase (state.json) says what the migration has done that a rollback must undo.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from profile_lake.migration.plan import Plan

PHASES = ("planned", "converted", "hydrated", "published", "rolled_back", "collected")
MIGRATION_ID = re.compile(r"^[a-z0-9_]{1,64}$")


def check_migration_id(migration_id: str) -> str:
    if not MIGRATION_ID.match(migration_id):
        raise ValueError(f"migration id {migration_id!r} must match {MIGRATION_ID.pattern}")
    return migration_id


@dataclass
class MigrationState:
    phase: str = "planned"
    table_location: str = ""
    moved_to: str = ""  # where publish moved the source's files (until they are collected)
    source_table_ddl: str = ""  # SHOW CREATE TABLE of a registered source, to restore it
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class MigrationFiles:
    home: Path
    migration_id: str

    @property
    def folder(self) -> Path:
        return self.home / "migrations" / check_migration_id(self.migration_id)

    def exists(self) -> bool:
        return (self.folder / "plan.json").exists()

    def save_plan(self, plan: Plan) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        _write(self.folder / "plan.json", plan.to_json())

    def plan(self) -> Plan:
        path = self.folder / "plan.json"
        if not path.exists():
            raise FileNotFoundError(
                f"no migration {self.migration_id} under {self.home}: start it with "
                "`profile-lake migrate shadow` or `profile-lake migrate in-place`"
            )
        return Plan.from_json(path.read_text())

    def state(self) -> MigrationState:
        path = self.folder / "state.json"
        return MigrationState(**json.loads(path.read_text())) if path.exists() else MigrationState()

    def save_state(self, state: MigrationState) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        _write(self.folder / "state.json", json.dumps(asdict(state), indent=1, sort_keys=True))

    def checksums(self) -> dict[int, tuple[int, int]]:
        """Per batch, (source rows, sum of the key hashes) as its hydration read them."""
        path = self.folder / "checksums.json"
        if not path.exists():
            return {}
        found = json.loads(path.read_text())
        return {int(batch): (rows, total) for batch, (rows, total) in found.items()}

    def save_checksum(self, batch: int, rows: int, total: int) -> None:
        """Keep what a batch's hydration measured of its source, so the audit need not read
        the source again (a batch without one, after a kill, is read by the audit)."""
        found = self.checksums()
        found[batch] = (rows, total)
        self.folder.mkdir(parents=True, exist_ok=True)
        _write(self.folder / "checksums.json", json.dumps(found, sort_keys=True))

    def retire(self, suffix: str) -> None:
        """Keep a finished (rolled back) migration's files under another name, so the id can
        start again."""
        if self.folder.exists():
            self.folder.rename(self.folder.with_name(f"{self.migration_id}.{suffix}"))


def _write(path: Path, text: str) -> None:
    """Write through a temporary file and a rename: a killed run leaves the old file or the
    new one, never half of one."""
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(text)
    temporary.replace(path)
