"""Two generated waves of acme's and globex's landing files, the second updating, deleting and
re-creating records of the first, with their bad lines; and a person of acme's whose record
lands in the first wave and whose erasure the second requests (SPEC.md section 7). The lakes of
pytests/integration/reference_lake/ land them in different runs (killed ones; scoped and
micro-batched ones) and must end in the same tables.
"""

from __future__ import annotations

import json
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
# The erased person: one record of hers, linked to no one, in wave 1; in wave 2 a later event
# of it, another person's record relating to her, and the request (written by hand: the
# generator writes no erasures). The lakes build no identity model, so the request's subject is
# her identity and the records whose primary_id it is.
ERASED_TENANT, ERASED_IDENTITY = "acme", "email:erased.person@example.com"
ERASED_RECORD, RELATED_RECORD = "erased-person-1", "relates-to-erased-1"
ERASURE_REQUEST_ID = "wave-2-erasure"


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


def _record_line(record_id: str, primary_id: str, related: list[str], event_ts: str) -> dict:
    return {
        "tenant_id": ERASED_TENANT,
        "record_id": record_id,
        "op": "upsert",
        "event_ts": event_ts,
        "seq": 1,
        "record_type": "profile",
        "primary_id": primary_id,
        "related_ids": related,
        "payload": {"note": record_id, "at": event_ts},
    }


def write_erasure_files(root: Path) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """The erased person's files of each wave (paths relative to `root`)."""
    parts = (
        {
            "records/erased-person-1.jsonl": [
                _record_line(ERASED_RECORD, ERASED_IDENTITY, [], "2025-12-15T00:00:00Z")
            ]
        },
        {
            "records/erased-person-2.jsonl": [
                _record_line(ERASED_RECORD, ERASED_IDENTITY, [], "2026-03-15T00:00:00Z"),
                _record_line(
                    RELATED_RECORD,
                    "email:relates@example.com",
                    [ERASED_IDENTITY],
                    "2026-03-15T00:00:00Z",
                ),
            ],
            "erasures/wave-2-erasure.jsonl": [
                {
                    "tenant_id": ERASED_TENANT,
                    "request_id": ERASURE_REQUEST_ID,
                    "identity": ERASED_IDENTITY,
                    "requested_ts": "2026-03-20T00:00:00Z",
                }
            ],
        },
    )
    for part in parts:
        for relative, messages in part.items():
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_text("".join(json.dumps(m) + "\n" for m in messages))
    first, second = ([Path(relative) for relative in part] for part in parts)
    return tuple(first), tuple(second)


def generate_waves(root: Path) -> Waves:
    waves = [generate_wave(root, base) for base in WAVE_INGEST_BASES]
    bad = frozenset(line for _, wave_bad in waves for line in wave_bad)
    erased = write_erasure_files(root)
    files = tuple(
        tuple(sorted((*generated, *extra)))
        for (generated, _), extra in zip(waves, erased, strict=True)
    )
    return Waves(root, files, bad)
