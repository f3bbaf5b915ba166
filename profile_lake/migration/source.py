"""A legacy Parquet dataset as its files: paths, sizes, footers, Hive partition values.

Everything here reads Parquet footers (pyarrow), never data pages, and needs no Spark: a
preflight over thousands of files costs a listing and one small read per file, made by a pool
of threads (pyarrow releases the GIL while it reads). The footers are read once per migration:
the plan keeps their row counts for the audit, the listing their null counts for the contract.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import pyarrow.parquet as pq

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
# Files and folders Spark, Hive and Delta write beside the data, never data themselves.
HIDDEN_PREFIXES = ("_", ".")
FOOTER_READERS = 8  # threads reading footers: the reads wait on the disk, not the CPU


@dataclass(frozen=True)
class SourceFile:
    """One data file: `path` relative to the dataset's root, as the plan and lineage name it."""

    path: str
    size: int
    mtime_ns: int
    rows: int
    partition: tuple[tuple[str, str | None], ...]
    columns: tuple[tuple[str, str], ...]  # (name, Arrow type) from the footer
    # nulls of each top-level column over the row groups' statistics; None: not recorded
    null_counts: tuple[tuple[str, int | None], ...] = ()

    def fingerprint(self) -> tuple[int, int]:
        """What changes when the file is rewritten (size, modification time)."""
        return (self.size, self.mtime_ns)


@dataclass(frozen=True)
class UnreadableFile:
    path: str
    reason: str


@dataclass(frozen=True)
class Listing:
    files: tuple[SourceFile, ...]
    unreadable: tuple[UnreadableFile, ...]
    bad_folders: tuple[str, ...]  # data files under a folder that is not name=value


def is_hidden(name: str) -> bool:
    return name.startswith(HIDDEN_PREFIXES)


def is_data_file(name: str) -> bool:
    """Not hidden, not a checksum, not a deletion vector (which an in-place migration writes
    beside the data files)."""
    if is_hidden(name) or name.endswith(".crc"):
        return False
    return not (name.startswith("deletion_vector_") and name.endswith(".bin"))


def data_file_paths(root: Path) -> list[str]:
    """Every data file under `root`, relative, sorted; hidden files and folders (_delta_log,
    _SUCCESS, .crc, a migration's maintenance marker, deletion vectors) are not data."""
    found = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not is_hidden(d))
        for name in names:
            if is_data_file(name):
                found.append(os.path.relpath(os.path.join(folder, name), root))
    return sorted(found)


def partition_of(relative_path: str) -> tuple[tuple[str, str | None], ...] | None:
    """The Hive partition values of a file's folders (`tenant_id=acme/dt=2024-01-05/x.parquet`),
    URL-decoded, `__HIVE_DEFAULT_PARTITION__` as None; None when a folder is not name=value."""
    parts = relative_path.split("/")[:-1]
    values: list[tuple[str, str | None]] = []
    for part in parts:
        name, sep, value = part.partition("=")
        if not sep or not name:
            return None
        decoded = unquote(value)
        values.append((unquote(name), None if decoded == HIVE_NULL else decoded))
    return tuple(values)


def stat_file(root: Path, relative_path: str) -> tuple[int, int]:
    stat = (root / relative_path).stat()
    return (stat.st_size, stat.st_mtime_ns)


def read_file(root: Path, relative_path: str) -> SourceFile | UnreadableFile:
    """The file's footer facts; an UnreadableFile (with the reason) when it has no valid footer."""
    size, mtime_ns = stat_file(root, relative_path)
    partition = partition_of(relative_path) or ()
    try:
        metadata = pq.read_metadata(root / relative_path)
        schema = metadata.schema.to_arrow_schema()
        counted = null_counts(metadata)
    except Exception as error:  # pyarrow raises several types for a corrupt footer
        return UnreadableFile(relative_path, f"{type(error).__name__}: {error}")
    partition_names = {name for name, _ in partition}
    columns = tuple(
        (field.name, str(field.type)) for field in schema if field.name not in partition_names
    )
    nulls = tuple((name, count) for name, count in counted if name not in partition_names)
    return SourceFile(relative_path, size, mtime_ns, metadata.num_rows, partition, columns, nulls)


def null_counts(metadata: pq.FileMetaData) -> list[tuple[str, int | None]]:
    """Each top-level (flat) column's nulls, summed over the row groups' statistics; None when
    a row group did not record them (the writer wrote no statistics)."""
    totals: dict[str, int | None] = {}
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for position in range(row_group.num_columns):
            chunk = row_group.column(position)
            name = chunk.path_in_schema
            if "." in name:  # a nested column's leaf (a list's elements): not a key
                continue
            statistics = chunk.statistics
            known = statistics is not None and statistics.has_null_count
            before = totals.get(name, 0)
            totals[name] = None if before is None or not known else before + statistics.null_count
    return list(totals.items())


def require_folder(root: Path) -> Path:
    """`root`, when it is a folder: a dataset's folder that does not exist (or a file) is an
    error saying so, not an empty dataset."""
    if not root.exists():
        raise FileNotFoundError(
            f"the dataset's folder {root} does not exist: pass the folder holding its Parquet "
            "files (its name=value partition folders)"
        )
    if not root.is_dir():
        raise NotADirectoryError(
            f"{root} is a file, not a dataset's folder: pass the folder holding its Parquet "
            "files (its name=value partition folders)"
        )
    return root


def list_source(root: Path, readers: int = FOOTER_READERS) -> Listing:
    """Every data file of the dataset with its footer facts, in path order (the footers read
    by `readers` threads)."""
    paths = data_file_paths(require_folder(root))
    bad_folders = tuple(path for path in paths if partition_of(path) is None)
    found = read_files(root, [path for path in paths if partition_of(path) is not None], readers)
    files = tuple(item for item in found if isinstance(item, SourceFile))
    unreadable = tuple(item for item in found if isinstance(item, UnreadableFile))
    return Listing(files, unreadable, bad_folders)


def read_files(
    root: Path, paths: Sequence[str], readers: int = FOOTER_READERS
) -> list[SourceFile | UnreadableFile]:
    """The footer facts of `paths`, in their order, read in parallel."""
    if readers <= 1 or len(paths) <= 1:
        return [read_file(root, path) for path in paths]
    with ThreadPoolExecutor(max_workers=readers) as pool:
        return list(pool.map(lambda path: read_file(root, path), paths))


def fingerprints(root: Path) -> dict[str, tuple[int, int]]:
    """(size, modification time) of every data file now: compared with a plan's to find files
    that changed, appeared or disappeared since they were read."""
    return {path: stat_file(root, path) for path in data_file_paths(root)}
