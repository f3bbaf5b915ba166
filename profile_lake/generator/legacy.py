"""A legacy Parquet dataset, as an older pipeline wrote it: one row per record with its current
payload, Hive-partitioned by tenant and snapshot date, for migrations (docs/migration.md).

Deterministic (same seed, same rows). The schema drifts: files of the later dates carry a
`consent` column the earlier ones lack. A few rows break the records contract (SPEC.md
section 2's rules, the ones a backfill snapshot keeps); the manifest lists them with the error
codes a migration must quarantine them with.
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from profile_lake.generator.tenants import TENANTS

# (error codes, how a good row is spoiled): one of each, in turn
BAD_ROWS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("missing_field",), "record_id"),
    (("invalid_identity",), "primary_id"),
    (("not_an_object",), "payload"),
    (("invalid_record_type",), "record_type"),
)
FIRST_DATE = date(2024, 1, 1)
BASE_TS = datetime(2024, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class LegacyConfig:
    out: Path
    seed: int = 7
    tenants: int = 2
    dates: int = 3
    files_per_partition: int = 2
    rows_per_file: int = 100
    bad_rows: int = 4
    drift_from_date: int = 2  # 0-based date index from which files carry `consent`
    payload_fields: int = 8


def _schema(with_consent: bool) -> pa.Schema:
    fields = [
        ("record_id", pa.string()),
        ("record_type", pa.string()),
        ("primary_id", pa.string()),
        ("related_ids", pa.list_(pa.string())),
        ("payload", pa.string()),
        ("updated_at", pa.timestamp("us", tz="UTC")),
    ]
    if with_consent:
        fields.append(("consent", pa.string()))
    return pa.schema(fields)


def _payload(rng: random.Random, serial: int, fields: int) -> str:
    payload: dict[str, object] = {"serial": serial, "tier": rng.choice(["gold", "silver"])}
    payload["address"] = {"city": rng.choice(["Oslo", "Lyon", "Porto"]), "zip": f"{serial:05d}"}
    for index in range(max(fields - 3, 0)):
        payload[f"f{index:02d}"] = rng.choice([rng.randint(0, 999), f"v{rng.randint(0, 99)}"])
    return json.dumps(payload, sort_keys=True, separators=(",", ":"))


def _row(rng: random.Random, tenant: str, serial: int, config: LegacyConfig) -> dict[str, object]:
    related = [f"cookie:{tenant}-{serial}-{n}" for n in range(rng.randint(0, 2))]
    return {
        "record_id": f"leg-{serial:07d}",
        "record_type": rng.choice(["profile", "event"]),
        "primary_id": f"email:{tenant}.{serial}@example.test",
        "related_ids": related,
        "payload": _payload(rng, serial, config.payload_fields),
        "updated_at": BASE_TS + timedelta(seconds=serial),
    }


def _spoil(row: dict[str, object], column: str) -> None:
    if column == "record_id":
        row["record_id"] = None
    elif column == "primary_id":
        row["primary_id"] = "nobody"
    elif column == "payload":
        row["payload"] = "[1, 2]"
    else:
        row["record_type"] = "invoice"


def generate_legacy(config: LegacyConfig) -> dict[str, object]:
    """Write the dataset under `config.out`; returns its manifest (also written as
    `_manifest.json` beside the data: an underscore file, which readers pass over)."""
    rng = random.Random(config.seed)
    total_files = config.tenants * config.dates * config.files_per_partition
    step = max(total_files // max(config.bad_rows, 1), 1)
    files: list[dict[str, object]] = []
    bad: list[dict[str, object]] = []
    serial = 0
    file_number = 0
    for tenant in TENANTS[: config.tenants]:
        for day in range(config.dates):
            folder = f"tenant_id={tenant.name}/snapshot_date={FIRST_DATE + timedelta(days=day)}"
            with_consent = day >= config.drift_from_date
            for part in range(config.files_per_partition):
                rows = []
                for _ in range(config.rows_per_file):
                    row = _row(rng, tenant.name, serial, config)
                    if with_consent:
                        row["consent"] = rng.choice(["granted", "denied"])
                    rows.append(row)
                    serial += 1
                if file_number % step == 0 and len(bad) < config.bad_rows and rows:
                    codes, column = BAD_ROWS[len(bad) % len(BAD_ROWS)]
                    index = rng.randrange(len(rows))
                    _spoil(rows[index], column)
                    path = f"{folder}/part-{part:05d}.parquet"
                    bad.append({"file": path, "row_index": index, "error_codes": list(codes)})
                path = f"{folder}/part-{part:05d}.parquet"
                (config.out / folder).mkdir(parents=True, exist_ok=True)
                table = pa.Table.from_pylist(rows, schema=_schema(with_consent))
                pq.write_table(table, config.out / path)
                files.append({"file": path, "rows": len(rows), "consent": with_consent})
                file_number += 1
    manifest = {
        "seed": config.seed,
        "rows": serial,
        "files": files,
        "bad_rows": bad,
        "partition_columns": ["tenant_id", "snapshot_date"],
        "drift": {
            "column": "consent",
            "from_date": str(FIRST_DATE + timedelta(days=config.drift_from_date)),
        },
    }
    (config.out / "_manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def add_legacy_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--out", required=True, type=Path, metavar="DIR", help="dataset folder (created)")
    add("--seed", type=int, default=7, metavar="N", help="same seed, same rows")
    add("--tenants", type=int, default=2, metavar="N", help="tenants (1-8)")
    add("--dates", type=int, default=3, metavar="N", help="snapshot dates per tenant")
    add("--files-per-partition", type=int, default=2, metavar="N", help="files per date")
    add("--rows-per-file", type=int, default=100, metavar="N", help="rows per file")
    add("--bad-rows", type=int, default=4, metavar="N", help="rows breaking the contract")
    add("--drift-from-date", type=int, default=2, metavar="N", help="first date with `consent`")
    add("--payload-fields", type=int, default=8, metavar="N", help="fields per payload")


def run_generate_legacy(args: argparse.Namespace) -> int:
    manifest = generate_legacy(
        LegacyConfig(
            out=args.out,
            seed=args.seed,
            tenants=args.tenants,
            dates=args.dates,
            files_per_partition=args.files_per_partition,
            rows_per_file=args.rows_per_file,
            bad_rows=args.bad_rows,
            drift_from_date=args.drift_from_date,
            payload_fields=args.payload_fields,
        )
    )
    print(
        f"wrote {manifest['rows']} rows in {len(manifest['files'])} files "  # type: ignore[arg-type]
        f"({len(manifest['bad_rows'])} bad) to {args.out}"  # type: ignore[arg-type]
    )
    return 0
