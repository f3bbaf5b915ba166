"""A Delta table's latest commit, history, properties and a column's minimum, read from its
`_delta_log` folder without Spark.

Every commit of a Delta table adds `_delta_log/<version, 20 digits>.json`; a checkpoint adds
`<version>.checkpoint[.<part>.<parts>].parquet` and may outlive the JSON files it replaces (log
cleanup). The latest version is the largest of either: listing one folder, no JVM, no job.

A commit's time is what Delta's DESCRIBE HISTORY gives, and what its change-feed reads and log
clean-up go by: the commit's in-commit timestamp when the table records them, else its file's
modification time, raised where needed so that times never go back from one version to the next.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from profile_lake.change_feed import Commit
from profile_lake.compaction import DataFile, data_file
from profile_lake.watch.status import parse_iso

SESSION_CATALOG = "spark_catalog"
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
    return commit_id(table_path, version)


def commit_id(table_path: Path, version: int) -> str | None:
    """Commit `version` of the table as latest_commit names it; None when its log no longer
    holds that version."""
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


def commit_history(table_path: Path, limit: int | None = None) -> list[Commit]:
    """The table's commits whose JSON files are left, newest first: all of them, or the newest
    `limit`. Empty when `table_path` holds no Delta log."""
    log = table_path / "_delta_log"
    try:
        names = [entry.name for entry in log.iterdir()]
    except (FileNotFoundError, NotADirectoryError):
        return []
    versions = sorted(
        int(match.group(1))
        for name in names
        if (match := _COMMIT.match(name)) and match.group(2) == "json"
    )
    # the time of the oldest commit shown depends on the one before it (times never go back)
    shown = versions if limit is None else versions[-(max(limit, 1) + 1) :]
    commits: list[Commit] = []
    previous_ms = -1
    for version in shown:
        path = log / f"{version:020d}.json"
        try:
            info = _commit_info(path)
            file_ms = path.stat().st_mtime_ns // 1_000_000
        except FileNotFoundError:  # removed by log clean-up meanwhile
            continue
        stamp_ms = info.get("inCommitTimestamp")
        moment_ms = int(stamp_ms) if isinstance(stamp_ms, int) else max(file_ms, previous_ms + 1)
        previous_ms = moment_ms
        commits.append(
            Commit(
                version,
                str(info.get("operation", "")),
                datetime.fromtimestamp(moment_ms / 1000, UTC),
            )
        )
    commits.reverse()
    return commits if limit is None else commits[: max(limit, 1)]


def commits_all_tagged(table_path: Path, after: int, through: int, tag: str) -> bool:
    """Whether every commit after version `after` up to `through` carries `tag` as its
    commitInfo's userMetadata (False when one of their files is gone)."""
    log = table_path / "_delta_log"
    for version in range(after + 1, through + 1):
        try:
            info = _commit_info(log / f"{version:020d}.json")
        except FileNotFoundError:
            return False
        if info.get("userMetadata") != tag:
            return False
    return True


def _commit_info(commit_file: Path) -> dict:
    """The commit's `commitInfo` action ({} when it has none)."""
    with commit_file.open(encoding="utf-8") as actions:
        for line in actions:
            if '"commitInfo"' in line:
                action = json.loads(line)
                if "commitInfo" in action:
                    return action["commitInfo"]
    return {}


def _checksum(table_path: Path, version: int) -> dict | None:
    """The checksum file Delta writes beside commit `version` (its size, file count and
    metadata as of that version); None when there is none (not every writer writes one)."""
    try:
        text = (table_path / "_delta_log" / f"{version:020d}.crc").read_text(encoding="utf-8")
        found = json.loads(text)
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def table_size_bytes(table_path: Path) -> int | None:
    """The bytes of the table's live data files at its latest version, from that version's
    checksum file; None when the table has no log or that version no checksum."""
    return _latest_checksum_count(table_path, "tableSizeBytes")


def table_file_count(table_path: Path) -> int | None:
    """The number of the table's live data files at its latest version, from that version's
    checksum file; None when the table has no log or that version no checksum."""
    return _latest_checksum_count(table_path, "numFiles")


def _latest_checksum_count(table_path: Path, field_name: str) -> int | None:
    """A whole number of the checksum file of the table's latest version (None: no log, no
    checksum at that version, or no such number in it)."""
    version = latest_version(table_path)
    found = None if version is None else _checksum(table_path, version)
    value = None if found is None else found.get(field_name)
    return value if isinstance(value, int) else None


@dataclass(frozen=True)
class ColumnMinimum:
    """The smallest value of a column over a table's live rows, as its files' statistics give
    it: `known` False when some live file's statistics do not say (or the log does not list
    the live files); `value` None when every row's is null (or the table has no row). A
    timestamp's statistics are cut to milliseconds, so `value` may be below the true minimum,
    never above it."""

    known: bool
    value: str | None = None


def column_minimum(table_path: Path, column: str) -> ColumnMinimum:
    """The minimum of top-level `column` over the live files of the table's latest version,
    from that version's checksum file, which lists the live files with their statistics when
    the table has few (Delta's allFilesInCrc); unknown otherwise."""
    version = latest_version(table_path)
    found = None if version is None else _checksum(table_path, version)
    files = None if found is None else found.get("allFiles")
    if not isinstance(files, list):
        return ColumnMinimum(False)
    smallest: str | None = None
    for added in files:
        value = _file_minimum(added, column)
        if value is _UNKNOWN:
            return ColumnMinimum(False)
        if isinstance(value, str) and (smallest is None or _before(value, smallest)):
            smallest = value
    return ColumnMinimum(True, smallest)


_UNKNOWN = object()


def _file_minimum(added: object, column: str) -> object:
    """One AddFile's minimum of `column`: a string, None (every row null), or _UNKNOWN."""
    stats = added.get("stats") if isinstance(added, dict) else None
    try:
        parsed = json.loads(stats) if isinstance(stats, str) else None
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict) or not isinstance(parsed.get("numRecords"), int):
        return _UNKNOWN
    nulls = (parsed.get("nullCount") or {}).get(column)
    if parsed["numRecords"] == 0 or nulls == parsed["numRecords"]:
        return None
    value = (parsed.get("minValues") or {}).get(column)
    return value if isinstance(value, str) else _UNKNOWN


def _before(left: str, right: str) -> bool:
    """Whether the timestamp (or other) statistic `left` is below `right`."""
    left_moment, right_moment = parse_iso(left), parse_iso(right)
    if left_moment is None or right_moment is None:
        return left < right
    return left_moment < right_moment


def changed_share(operation_metrics: Mapping[str, object] | None) -> float:
    """The share of the rows a commit wrote that it changed, from its operation metrics: a
    MERGE, UPDATE or DELETE rewrites whole files and copies their other rows unchanged; any
    other write (an append, an overwrite, a create) wrote only rows it changed."""
    metrics = operation_metrics or {}

    def count(name: str) -> int:
        try:
            return int(str(metrics.get(name) or 0))
        except ValueError:
            return 0

    if "numTargetRowsCopied" in metrics:  # MERGE
        changed = count("numTargetRowsInserted") + count("numTargetRowsUpdated")
        copied = count("numTargetRowsCopied")
    elif "numCopiedRows" in metrics:  # UPDATE, DELETE
        changed, copied = count("numUpdatedRows"), count("numCopiedRows")
    else:
        return 1.0
    written = changed + copied
    return changed / written if written else 0.0


def changed_bytes_since(table_path: Path, version: int) -> int | None:
    """About the bytes of the rows the table's commits after `version` changed: the new data
    files each commit added, weighed by its changed_share (a MERGE that rewrote every file to
    change a few rows changed a few rows' bytes; a file given a deletion vector, and a
    compaction, changed none); None when one of those commits' files is gone (log clean-up)."""
    latest = latest_version(table_path)
    if latest is None:
        return None
    changed = 0.0
    for later in range(version + 1, latest + 1):
        added: dict[str, int] = {}
        removed: set[str] = set()
        metrics = None
        try:
            with (table_path / "_delta_log" / f"{later:020d}.json").open(encoding="utf-8") as log:
                for line in log:
                    if line.startswith('{"add"'):
                        action = json.loads(line)["add"]
                        if action.get("dataChange") is not False:
                            added[str(action.get("path"))] = int(action.get("size") or 0)
                    elif line.startswith('{"remove"'):
                        removed.add(str(json.loads(line)["remove"].get("path")))
                    elif line.startswith('{"commitInfo"'):
                        metrics = json.loads(line)["commitInfo"].get("operationMetrics")
        except FileNotFoundError:
            return None
        # a file removed and added again by one commit is the same file with a deletion vector
        # now: its rows did not change, only the few the vector marks deleted
        written = sum(size for path, size in added.items() if path not in removed)
        changed += written * changed_share(metrics)
    return round(changed)


def partition_folder_count(table_path: Path, column: str) -> int | None:
    """How many values of partition column `column` the table's folder has a folder for
    (`<column>=<value>`; a value whose rows are all gone keeps its folder until a vacuum);
    None when it has none (not partitioned by `column`, or not on this machine)."""
    try:
        count = sum(1 for entry in table_path.iterdir() if entry.name.startswith(f"{column}="))
    except (FileNotFoundError, NotADirectoryError):
        return None
    return count or None


_FILE_ACTIONS = ("add", "remove", "cdc")


def partition_values_written_since(
    table_path: Path, version: int, column: str
) -> frozenset[str] | None:
    """The values of partition column `column` of the data files that the commits after
    `version` up to the latest added, removed or wrote change data to (a compaction, which
    changes no row, is left out); None when that is not known: a commit's file is gone (log
    clean-up), a commit changed the table's metadata (its schema or partitioning), or a file
    has no value of `column` (the table is not partitioned by it)."""
    latest = latest_version(table_path)
    if latest is None:
        return None
    found: set[str] = set()
    for later in range(version + 1, latest + 1):
        try:
            with (table_path / "_delta_log" / f"{later:020d}.json").open(encoding="utf-8") as log:
                for line in log:
                    action = json.loads(line)
                    if "metaData" in action:
                        return None
                    kind = next((name for name in _FILE_ACTIONS if name in action), None)
                    if kind is None or action[kind].get("dataChange") is False:
                        continue
                    values = action[kind].get("partitionValues") or {}
                    if column not in values or values[column] is None:
                        return None
                    found.add(str(values[column]))
        except FileNotFoundError:
            return None
    return frozenset(found)


def live_data_files(table_path: Path) -> list[DataFile] | None:
    """The table's live data files (partition values and size) as of its latest version: from
    its checksum's file list where Delta wrote one (a table of few files), else read from its
    log by delta-rs; None when `table_path` holds no Delta log or the reader cannot read it."""
    import pyarrow as pa
    from deltalake import DeltaTable

    version = latest_version(table_path)
    if version is None:
        return None
    found = _checksum(table_path, version)
    listed = None if found is None else found.get("allFiles")
    if isinstance(listed, list):
        return [
            data_file(file.get("partitionValues") or {}, int(file.get("size") or 0))
            for file in listed
        ]
    try:
        actions = pa.table(DeltaTable(os.fspath(table_path)).get_add_actions(flatten=False))
    except Exception:  # any table delta-rs cannot read: the caller leaves it as it is
        return None
    sizes = actions.column("size_bytes").to_pylist()
    if "partition" not in actions.column_names:
        return [data_file({}, size) for size in sizes]
    partitions = actions.column("partition").to_pylist()
    return [data_file(values or {}, size) for values, size in zip(partitions, sizes, strict=True)]


def table_properties(table_path: Path) -> dict[str, str] | None:
    """The table's properties (its metadata's configuration) as of its latest version; None
    when `table_path` holds no Delta log or the reader cannot read it."""
    from deltalake import DeltaTable

    version = latest_version(table_path)
    if version is None:
        return None
    found = _checksum(table_path, version)
    metadata = None if found is None else found.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("configuration"), dict):
        return {str(key): str(value) for key, value in metadata["configuration"].items()}
    try:
        return dict(DeltaTable(os.fspath(table_path)).metadata().configuration)
    except Exception:  # any table delta-rs cannot read: the caller asks Spark
        return None


def split_table_name(table: str) -> tuple[str, str] | None:
    """`schema.table` (backticks and the session catalog's name allowed) as (schema, table);
    None for any other form."""
    parts = [part.strip("`") for part in table.split(".")]
    if len(parts) == 3 and parts[0].lower() == SESSION_CATALOG:
        parts = parts[1:]
    if len(parts) != 2 or not all(parts):
        return None
    return parts[0], parts[1]
