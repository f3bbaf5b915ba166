"""`profile-lake backfill`: land a tenant's legacy snapshot of records (SPEC.md section 6).

The snapshot's Parquet rows (record_id, record_type, primary_id, related_ids, payload) become
landing lines of `records/` with op `snapshot`, event_ts the as-of time T and seq the largest
bigint (jsonmerge.SNAPSHOT_SEQ), in files named `backfill-<tenant>-<T>-part-N.jsonl`. From
there the pipeline treats them as any landed line: ingested exactly once, validated by
section 2's rules (a bad row is quarantined in ingest_errors, naming the file and line, which
is the snapshot's row in order), and folded into `records` as the record's whole state at T,
under later events and over earlier ones. No Spark: pyarrow reads the snapshot batch by batch.

A backfill is refused, with nothing landed, when the snapshot does not exist or lacks its
columns, holds no row of the tenant (the error names the tenants it holds), or holds a record
under two rows (a snapshot is one row per record, its state at T: the error names the records,
and the files of one). Hive partition folders are read as strings (`tenant_id=0001`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from profile_lake.jsonmerge import SNAPSHOT, SNAPSHOT_SEQ
from profile_lake.migration.source import partition_of

SNAPSHOT_COLUMNS = ("record_id", "record_type", "primary_id", "related_ids", "payload")
REQUIRED_COLUMNS = ("record_id", "record_type", "primary_id", "payload")
FILE_PREFIX = "backfill-"
SHOWN = 5  # record ids or tenants an error names, at most


def parse_as_of(text: str) -> datetime:
    """The as-of time: ISO-8601 with a zone (a naive time has no instant), in UTC."""
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"--as-of {text!r} is not an ISO-8601 time: write e.g. 2024-06-01T00:00:00Z"
        ) from None
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


@dataclass(frozen=True)
class Snapshot:
    """A snapshot as a Parquet dataset (a file or a folder), narrowed to one tenant's rows when
    it holds several (a tenant_id column or Hive folder)."""

    path: Path
    dataset: ds.Dataset
    tenant: str

    @classmethod
    def open(cls, path: Path, tenant: str) -> Snapshot:
        """Hive partition folders are read as columns of strings: the folder `tenant_id=0001`
        is the tenant `0001`, not the number 1."""
        if not path.exists():
            raise ValueError(
                f"snapshot {path} does not exist: pass --snapshot a Parquet file of the "
                "tenant's records, or a folder of them"
            )
        files = ds.dataset(path, format="parquet").files
        if not files:
            raise ValueError(f"snapshot {path} holds no Parquet file: pass the snapshot's folder")
        names: dict[str, None] = {}  # the partition folders' names, in order
        for file in files if path.is_dir() else ():
            names.update(
                (name, None) for name, _ in partition_of(os.path.relpath(file, path)) or ()
            )
        hive = ds.partitioning(pa.schema([(name, pa.string()) for name in names]), flavor="hive")
        dataset = ds.dataset(
            files, format="parquet", partitioning=hive, partition_base_dir=str(path)
        )
        missing = [name for name in REQUIRED_COLUMNS if name not in dataset.schema.names]
        if missing:
            raise ValueError(f"snapshot {path} lacks the columns {missing} (SPEC.md section 6)")
        return cls(path, dataset, tenant)

    @property
    def where(self) -> ds.Expression | None:
        """The tenant's rows; None when the snapshot has no tenant_id (all its rows are the
        tenant's)."""
        if "tenant_id" not in self.dataset.schema.names:
            return None
        return ds.field("tenant_id") == self.tenant

    def rows(self) -> Iterator[dict[str, Any]]:
        """The tenant's rows, batch by batch."""
        names = self.dataset.schema.names
        columns = [name for name in SNAPSHOT_COLUMNS if name in names]
        for batch in self.dataset.to_batches(columns=columns, filter=self.where):
            yield from batch.to_pylist()

    def check(self) -> int:
        """The tenant's row count, after refusing (ValueError, saying what to do) a snapshot
        with no row of the tenant, or with a record under two rows or more: a snapshot is each
        record's state at one as-of time (SPEC.md section 6), so two rows of one record would
        tie and leave its state undefined. Reads the record_id column only."""
        record_ids = self.dataset.to_table(columns=["record_id"], filter=self.where)["record_id"]
        if len(record_ids) == 0:
            raise ValueError(self._no_rows())
        counts = pc.value_counts(record_ids)
        repeated = counts.filter(
            pc.and_(pc.greater(counts.field("counts"), 1), pc.is_valid(counts.field("values")))
        )
        if len(repeated):
            raise ValueError(self._repeated(repeated.field("values").to_pylist()))
        return len(record_ids)

    def _no_rows(self) -> str:
        if self.where is None:
            return f"snapshot {self.path} holds no rows: nothing to land"
        tenants = pc.unique(self.dataset.to_table(columns=["tenant_id"])["tenant_id"])
        held = sorted(str(tenant) for tenant in tenants.to_pylist() if tenant is not None)
        if not held:
            return f"snapshot {self.path} holds no rows: nothing to land"
        return (
            f"snapshot {self.path} holds no rows of tenant {self.tenant}; it holds tenant(s) "
            f"{_listed(held)}: pass one of them to --tenant"
        )

    def _repeated(self, record_ids: list[Any]) -> str:
        first = record_ids[0]
        files = self._files_holding(first)
        folders = sorted({str(Path(file).parent) for file in files})
        what_to_do = (
            f"pass the folder of one as-of time (e.g. --snapshot {self.path / folders[0]}), "
            "or drop the extra rows"
            if len(folders) > 1 and self.path.is_dir()
            else "drop the extra rows"
        )
        return (
            f"snapshot {self.path} holds {len(record_ids)} record(s) of tenant {self.tenant} "
            f"under two rows or more: {_listed(record_ids)} ({first} is in "
            f"{', '.join(files)}). A snapshot holds one row per record, its state at the as-of "
            "time (SPEC.md section 6): "
            f"{what_to_do}. Nothing was landed"
        )

    def _files_holding(self, record_id: Any) -> list[str]:
        """The snapshot's files (relative to it) with a row of the tenant's record."""
        where = ds.field("record_id") == record_id
        if self.where is not None:
            where = self.where & where
        found = []
        for fragment in self.dataset.get_fragments(filter=self.where):
            hits = fragment.to_table(
                schema=self.dataset.schema, columns=["record_id"], filter=where
            )
            if hits.num_rows:
                found.append(
                    os.path.relpath(fragment.path, self.path)
                    if self.path.is_dir()
                    else fragment.path
                )
        return found


def _listed(values: Sequence[Any]) -> str:
    """Up to SHOWN values, and how many more."""
    shown = ", ".join(str(value) for value in values[:SHOWN])
    return shown + (f" and {len(values) - SHOWN} more" if len(values) > SHOWN else "")


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
    """Write the lines in files of `lines_per_file`, every file under a hidden name first, all
    renamed once all are written: the ingest never sees half a file, and a backfill that
    fails on the way (an unreadable file of the snapshot) leaves nothing behind."""
    if any(folder.glob(f"{stem}-part-*")):
        raise ValueError(
            f"{folder}/{stem}-part-* already landed: a snapshot lands once (a landed file is "
            "never changed); a new snapshot has a new as-of time"
        )
    created = [path for path in (folder, *folder.parents) if not path.exists()]
    folder.mkdir(parents=True, exist_ok=True)
    hidden: list[Path] = []
    rows = 0
    chunk: list[str] = []

    def flush() -> None:
        path = folder / f".{stem}-part-{len(hidden):05d}.jsonl.tmp"
        hidden.append(path)
        path.write_text("".join(line + "\n" for line in chunk), encoding="utf-8")
        chunk.clear()

    try:
        for line in lines:
            chunk.append(line)
            rows += 1
            if len(chunk) >= lines_per_file:
                flush()
        if chunk:
            flush()
    except BaseException:
        for path in hidden:
            path.unlink(missing_ok=True)
        for path in created:  # the folders this call made, innermost first
            with suppress(OSError):
                path.rmdir()
        raise
    files = tuple(path.with_name(path.name[1:].removesuffix(".tmp")) for path in hidden)
    for path, final in zip(hidden, files, strict=True):
        path.rename(final)
    return BackfillReport(files, rows)


def backfill(
    snapshot: Path, landing: Path, tenant: str, as_of: str, lines_per_file: int = 50_000
) -> BackfillReport:
    """Land the tenant's rows of the snapshot, once checked (see Snapshot.check): a refused
    backfill writes nothing."""
    moment = parse_as_of(as_of)
    source = Snapshot.open(snapshot, tenant)
    source.check()
    lines = (snapshot_line(row, tenant, moment) for row in source.rows())
    return land_lines(lines, landing / "records", file_stem(tenant, moment), lines_per_file)


def add_backfill_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--snapshot", required=True, type=Path, help="the snapshot: a Parquet file or folder")
    add("--tenant", required=True, help="the tenant whose records it holds")
    add("--as-of", required=True, help="when it was taken: ISO-8601 with a zone")
    add("--landing", type=Path, help="landing folder (default: PROFILE_LAKE_LANDING)")
    add("--lines-per-file", type=int, default=50_000, help="lines per landing file")


def run_backfill(args: argparse.Namespace) -> int:
    landing = args.landing or Path(os.environ.get("PROFILE_LAKE_LANDING", "sample/landing"))
    try:
        report = backfill(args.snapshot, landing, args.tenant, args.as_of, args.lines_per_file)
    except (ValueError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(report.describe())
    print("run `dbt build` to apply it: bad rows land in ingest_errors (file, line = row)")
    return 0
