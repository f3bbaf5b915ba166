"""`profile-lake backfill`: land a tenant's legacy snapshot of records (SPEC.md section 6).

The snapshot's Parquet rows (record_id, record_type, primary_id, related_ids, payload) become
landing lines of `records/` with op `snapshot`, event_ts the as-of time T and seq the largest
bigint (jsonmerge.SNAPSHOT_SEQ), in files named `backfill-<tenant>-<T>-part-N.jsonl`. From
there the pipeline treats them as any landed line: ingested exactly once, validated by
section 2's rules (a bad row is quarantined in ingest_errors, naming the file and line, which
is the snapshot's row in order), and folded into `records` as the record's whole state at T,
under later events and over earlier ones. No Spark: pyarrow reads the snapshot batch by batch.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds

from profile_lake.jsonmerge import SNAPSHOT, SNAPSHOT_SEQ

SNAPSHOT_COLUMNS = ("record_id", "record_type", "primary_id", "related_ids", "payload")
REQUIRED_COLUMNS = ("record_id", "record_type", "primary_id", "payload")
FILE_PREFIX = "backfill-"


def parse_as_of(text: str) -> datetime:
    """The as-of time: ISO-8601 with a zone (a naive time has no instant), in UTC."""
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is None:
        raise ValueError(f"--as-of {text!r} needs a zone, e.g. 2024-06-01T00:00:00Z")
    return value.astimezone(UTC)


def file_stem(tenant: str, as_of: datetime) -> str:
    return f"{FILE_PREFIX}{tenant}-{as_of:%Y%m%dT%H%M%S%fZ}"


def _payload(value: Any) -> Any:
    """A JSON object as the landing line carries it: a JSON text is parsed; anything that is
    not an object is kept as it is, so the pipeline quarantines it (payload wrong_type)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def snapshot_line(row: dict[str, Any], tenant: str, as_of: datetime) -> str:
    """One landing line for one snapshot row."""
    message = {
        "tenant_id": tenant,
        "record_id": row.get("record_id"),
        "op": SNAPSHOT,
        "event_ts": as_of.isoformat().replace("+00:00", "Z"),
        "seq": SNAPSHOT_SEQ,
        "record_type": row.get("record_type"),
        "primary_id": row.get("primary_id"),
        "related_ids": row.get("related_ids"),
        "payload": _payload(row.get("payload")),
    }
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=str)


def snapshot_rows(path: Path, tenant: str) -> Iterator[dict[str, Any]]:
    """The snapshot's rows (a Parquet file or a folder, Hive partitions read as columns); a
    dataset of several tenants (a tenant_id column) gives the tenant's rows only."""
    dataset = ds.dataset(path, format="parquet", partitioning="hive")
    names = dataset.schema.names
    missing = [name for name in REQUIRED_COLUMNS if name not in names]
    if missing:
        raise ValueError(f"snapshot {path} lacks the columns {missing} (SPEC.md section 6)")
    columns = [name for name in SNAPSHOT_COLUMNS if name in names]
    where = ds.field("tenant_id") == tenant if "tenant_id" in names else None
    for batch in dataset.to_batches(columns=columns, filter=where):
        yield from batch.to_pylist()


@dataclass(frozen=True)
class BackfillReport:
    files: tuple[Path, ...]
    rows: int

    def describe(self) -> str:
        return f"landed {self.rows} snapshot rows in {len(self.files)} files: " + ", ".join(
            str(path) for path in self.files
        )


def land_lines(
    lines: Iterable[str], folder: Path, stem: str, lines_per_file: int
) -> BackfillReport:
    """Write the lines in files of `lines_per_file`, each under a hidden name first and then
    renamed: the ingest never sees half a file."""
    folder.mkdir(parents=True, exist_ok=True)
    if any(folder.glob(f"{stem}-part-*")):
        raise ValueError(
            f"{folder}/{stem}-part-* already landed: a snapshot lands once (a landed file is "
            "never changed); a new snapshot has a new as-of time"
        )
    files: list[Path] = []
    rows = 0
    chunk: list[str] = []

    def flush() -> None:
        final = folder / f"{stem}-part-{len(files):05d}.jsonl"
        hidden = folder / f".{final.name}.tmp"
        hidden.write_text("".join(line + "\n" for line in chunk), encoding="utf-8")
        hidden.rename(final)
        files.append(final)
        chunk.clear()

    for line in lines:
        chunk.append(line)
        rows += 1
        if len(chunk) >= lines_per_file:
            flush()
    if chunk:
        flush()
    return BackfillReport(tuple(files), rows)


def backfill(
    snapshot: Path, landing: Path, tenant: str, as_of: str, lines_per_file: int = 50_000
) -> BackfillReport:
    moment = parse_as_of(as_of)
    lines = (snapshot_line(row, tenant, moment) for row in snapshot_rows(snapshot, tenant))
    return land_lines(lines, landing / "records", file_stem(tenant, moment), lines_per_file)


def add_backfill_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--snapshot", required=True, type=Path, help="the snapshot: a Parquet file or folder")
    add("--tenant", required=True, help="the tenant whose records it holds")
    add("--as-of", required=True, help="when it was taken: ISO-8601 with a zone")
    add("--landing", type=Path, help="landing folder (default: PROFILE_LAKE_LANDING)")
    add("--lines-per-file", type=int, default=50_000, help="lines per landing file")


def run_backfill(args: argparse.Namespace) -> int:
    import os

    landing = args.landing or Path(os.environ.get("PROFILE_LAKE_LANDING", "sample/landing"))
    try:
        report = backfill(args.snapshot, landing, args.tenant, args.as_of, args.lines_per_file)
    except ValueError as error:
        print(f"error: {error}")
        return 1
    print(report.describe())
    print("run `dbt build` to apply it: bad rows land in ingest_errors (file, line = row)")
    return 0
