"""A Delta table's latest commit, read from its `_delta_log` folder without Spark.

Every commit of a Delta table adds `_delta_log/<version, 20 digits>.json`; a checkpoint adds
`<version>.checkpoint[.<part>.<parts>].parquet` and may outlive the JSON files it replaces (log
cleanup). The latest version is the largest of either: listing one folder, no JVM, no job.
"""

from __future__ import annotations

import re
from pathlib import Path

_COMMIT = re.compile(r"^(\d{20})\.(json|checkpoint(\.\d+\.\d+)?\.parquet)$")


def latest_version(table_path: Path) -> int | None:
    """The table's latest version; None when `table_path` holds no Delta log."""
    try:
        names = [entry.name for entry in (table_path / "_delta_log").iterdir()]
    except (FileNotFoundError, NotADirectoryError):
        return None
    versions = [int(match.group(1)) for name in names if (match := _COMMIT.match(name))]
    return max(versions) if versions else None


def latest_commit(table_path: Path) -> str | None:
    """The latest commit as `<version>@<its file's mtime in ns>`: a table dropped and created
    again restarts its versions, and the time tells its commits from the old table's."""
    version = latest_version(table_path)
    if version is None:
        return None
    log = table_path / "_delta_log"
    candidates = [log / f"{version:020d}.json", *log.glob(f"{version:020d}.checkpoint*.parquet")]
    for path in candidates:
        try:
            return f"{version}@{path.stat().st_mtime_ns}"
        except FileNotFoundError:
            continue
    return None


def local_warehouse(warehouse_dir: str) -> Path | None:
    """The folder of a `spark.sql.warehouse.dir`; None when it is not on this machine's file
    system (`hdfs:`, `s3a:`), where the log cannot be listed as a folder."""
    path = warehouse_dir.removeprefix("file://").removeprefix("file:")
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", path):
        return None
    return Path(path).resolve()


def managed_table_path(warehouse: Path, schema: str, table: str) -> Path:
    """Where the metastore keeps a managed table of `schema` (Spark's and Hive's layout)."""
    if schema.lower() == "default":
        return warehouse / table.lower()
    return warehouse / f"{schema.lower()}.db" / table.lower()
