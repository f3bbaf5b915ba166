"""`profile-lake lookup`: the profiles holding some (tenant_id, identity_id) keys, read straight
from the lake's Delta tables with the independent deltalake reader: no JVM and no Spark session,
so a support tool has its answer in well under a second. One JSON object per key.

Both reads prune files by Delta's statistics: identity_index is sorted by (tenant_id,
identity_id) in small files (a key's rows sit in one or two of them), profiles is partitioned by
tenant_id. Each file's min/max statistics become its dataset fragment's guarantee, so pyarrow
opens only the files that can hold a key.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

Key = tuple[str, str]

PROFILE_COLUMNS = [
    "profile_id",
    "identities",
    "identity_names",
    "live_records",
    "identity_count",
    "record_count",
    "record_count_by_type",
    "first_event_ts",
    "last_event_ts",
    "last_event_ts_by_type",
]


def keys_by_tenant(keys: Iterable[Key]) -> dict[str, list[str]]:
    """The keys' identities per tenant, each once, in the order given."""
    grouped: dict[str, list[str]] = {}
    for tenant_id, identity_id in keys:
        identities = grouped.setdefault(tenant_id, [])
        if identity_id not in identities:
            identities.append(identity_id)
    return grouped


def join_profiles(
    keys: Sequence[Key], index_rows: Iterable[dict], profile_rows: Iterable[dict]
) -> list[dict[str, Any]]:
    """One result per distinct key, in the order given: the key, its canonical identity and its
    profile's columns, or `profile_id` None when the index does not hold the key (or its
    profile is gone)."""
    index = {(row["tenant_id"], row["identity_id"]): row for row in index_rows}
    profiles = {(row["tenant_id"], row["profile_id"]): row for row in profile_rows}
    results = []
    for tenant_id, identity_id in dict.fromkeys(keys):
        found = index.get((tenant_id, identity_id))
        profile = found and profiles.get((tenant_id, found["profile_id"]))
        if not profile:
            results.append({"tenant_id": tenant_id, "identity_id": identity_id, "profile_id": None})
            continue
        results.append(
            {
                "tenant_id": tenant_id,
                "identity_id": identity_id,
                "canonical_id": found["canonical_id"],
                **{column: profile[column] for column in PROFILE_COLUMNS},
            }
        )
    return results


def to_json_line(result: dict[str, Any]) -> str:
    """A result as one JSON line (timestamps in ISO 8601)."""

    def encode(value: Any) -> str:
        if isinstance(value, datetime):
            return value.isoformat()
        raise TypeError(f"not JSON serializable: {type(value).__name__}")

    return json.dumps(result, default=encode, ensure_ascii=False)


def read_matching(table_dir: Path, key_column: str, wanted: dict[str, list[str]]) -> list[dict]:
    """Rows of a Delta table whose (tenant_id, `key_column`) is among `wanted` (tenant ->
    values), reading only the files whose statistics or partition admit one of them."""
    import pyarrow.dataset as ds
    from deltalake import DeltaTable
    from pyarrow import fs

    from profile_lake.delta_reader import has_deletion_vectors, plain_types

    if not wanted:
        return []
    table = DeltaTable(str(table_dir))
    if has_deletion_vectors(table):
        # incremental MERGEs mark replaced rows in deletion vectors, which only delta-rs'
        # DataFusion scan applies; it skips files by the same statistics
        found = plain_types(pa.table(table.scan(predicate=matching_sql(key_column, wanted))))
        return found.to_pylist(maps_as_pydicts="strict")
    files = fs.SubTreeFileSystem(str(table_dir), fs.LocalFileSystem())
    dataset = table.to_pyarrow_dataset(filesystem=files)
    predicate = None
    for tenant_id, values in wanted.items():
        term = (ds.field("tenant_id") == tenant_id) & ds.field(key_column).isin(values)
        predicate = term if predicate is None else predicate | term
    # maps as dicts, so they print as JSON objects, as Spark's to_json does
    return dataset.to_table(filter=predicate).to_pylist(maps_as_pydicts="strict")


def matching_sql(key_column: str, wanted: dict[str, list[str]]) -> str:
    """The SQL predicate (DataFusion's dialect) of the rows whose (tenant_id, `key_column`) is
    among `wanted`."""

    def literal(text: str) -> str:
        return "'" + text.replace("'", "''") + "'"

    terms = [
        f"(tenant_id = {literal(tenant)} and {key_column} in "
        f"({', '.join(literal(value) for value in values)}))"
        for tenant, values in sorted(wanted.items())
    ]
    return " or ".join(terms)


def profiles_of_keys(marts_dir: Path, keys: Sequence[Key]) -> list[dict[str, Any]]:
    """The profiles of `keys` from identity_index and profiles under `marts_dir` (the folder of
    the marts schema's tables)."""
    index_rows = read_matching(marts_dir / "identity_index", "identity_id", keys_by_tenant(keys))
    profile_keys = [(row["tenant_id"], row["profile_id"]) for row in index_rows]
    profile_rows = read_matching(marts_dir / "profiles", "profile_id", keys_by_tenant(profile_keys))
    return join_profiles(keys, index_rows, profile_rows)


def marts_folder(home: Path, schema: str) -> Path:
    """Where the local targets keep the marts schema's tables."""
    return home / "warehouse" / f"{schema}.db"


def parse_keys(pairs: Sequence[str], keys_file: Path | None) -> list[Key]:
    """Keys from `TENANT IDENTITY` pairs on the command line and from a file of
    `tenant_id,identity_id` lines (a header line `tenant_id,identity_id` is skipped)."""
    if len(pairs) % 2:
        raise ValueError("give keys as pairs: TENANT IDENTITY [TENANT IDENTITY ...]")
    keys = [(pairs[i], pairs[i + 1]) for i in range(0, len(pairs), 2)]
    if keys_file is not None:
        for number, line in enumerate(keys_file.read_text().splitlines(), start=1):
            if not line.strip() or line.strip() == "tenant_id,identity_id":
                continue
            tenant_id, comma, identity_id = line.partition(",")
            if not comma or not tenant_id.strip() or not identity_id.strip():
                raise ValueError(f"{keys_file}:{number}: expected tenant_id,identity_id")
            keys.append((tenant_id.strip(), identity_id.strip()))
    if not keys:
        raise ValueError("give at least one key: TENANT IDENTITY, or --keys-file")
    return keys


def run_lookup(pairs: Sequence[str], keys_file: Path | None) -> int:
    """The command: print one JSON line per key; exit 1 when a key has no profile, 2 on a
    usage error or a missing table."""
    home = Path(os.environ.get("PROFILE_LAKE_HOME", ".lake"))
    schema = os.environ.get("PROFILE_LAKE_SCHEMA", "profile_lake")
    try:
        keys = parse_keys(pairs, keys_file)
    except (ValueError, OSError) as error:
        print(f"profile-lake lookup: {error}", file=sys.stderr)
        return 2
    marts_dir = marts_folder(home, schema)
    missing = [name for name in ("identity_index", "profiles") if not (marts_dir / name).is_dir()]
    if missing:
        print(
            f"profile-lake lookup: no {' or '.join(missing)} under {marts_dir}: "
            "run `make run` (or dbt build) first, or set PROFILE_LAKE_HOME / PROFILE_LAKE_SCHEMA",
            file=sys.stderr,
        )
        return 2
    results = profiles_of_keys(marts_dir, keys)
    for result in results:
        print(to_json_line(result))
    return 0 if all(result["profile_id"] is not None for result in results) else 1
