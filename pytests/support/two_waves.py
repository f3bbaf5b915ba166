"""Two generated waves of acme's and globex's landing files, the second updating, deleting and
re-creating records of the first, with their bad lines. The lakes of
pytests/integration/reference_lake/ land them in different runs (killed ones; scoped and
micro-batched ones) and must end in the same tables.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from profile_lake.generator.config import GeneratorConfig
from profile_lake.generator.core import generate

# Every output of the records pipeline, without the data tests (the assertions check what they
# would, and the runs stay short). Without ingest_max_files_per_batch, a run stages a wave in one
# ingest batch.
SELECTION = (
    "--select",
    "+ingest_errors",
    "+ingest_file_accounting",
    "+record_notifications",
    "+tenant_lag",
    "--exclude",
    "resource_type:test",
)
# The generator's events fall in the 60 days before the ingest base: 90 days apart, every event
# of the second wave is newer than every event of the first.
WAVE_INGEST_BASES = ("2026-01-01T00:00:00Z", "2026-04-01T00:00:00Z")


@dataclass(frozen=True)
class Waves:
    """Two generated waves of landing files, each a list of paths relative to `root`, and the
    bad lines of both (file relative to the landing folder, line number)."""

    root: Path
    files: tuple[tuple[Path, ...], ...]
    bad: frozenset[tuple[str, int]]

    def land(self, wave: int, landing: Path) -> None:
        """Copy one wave's files into a landing folder."""
        for relative in self.files[wave]:
            (landing / relative.parent).mkdir(parents=True, exist_ok=True)
            shutil.copy2(self.root / relative, landing / relative)


def _landing_files(root: Path) -> set[Path]:
    return {path.relative_to(root) for path in root.glob("*/*.jsonl*")}


def generate_wave(root: Path, ingest_base: str) -> tuple[tuple[Path, ...], set[tuple[str, int]]]:
    """A small batch beside the earlier ones: the same seed, so the same tenants and records.
    A wave writes two records files and one of each other stream; every second file of a stream
    is gzipped, so each wave lands a .gz file (its second records file). Its files and bad
    lines."""
    before = _landing_files(root)
    manifest = generate(
        GeneratorConfig(
            out=root,
            seed=41,
            tenants=2,
            records_per_tenant=20,
            renames_per_tenant=5,
            names_per_tenant=10,
            delete_rate=0.3,
            bad_rate=0.05,
            lines_per_file=100,
            gzip_every=2,
            ingest_base=ingest_base,
            quiet=True,
        )
    )
    bad = {(entry["file"], entry["line"]) for entry in manifest["bad_lines"]}
    return tuple(sorted(_landing_files(root) - before)), bad


def generate_waves(root: Path) -> Waves:
    waves = [generate_wave(root, base) for base in WAVE_INGEST_BASES]
    bad = frozenset(line for _, wave_bad in waves for line in wave_bad)
    return Waves(root, tuple(files for files, _ in waves), bad)
