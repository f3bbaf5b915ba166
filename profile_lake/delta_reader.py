"""Read a Delta table with the independent `deltalake` (delta-rs) reader, without Spark."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable
from pyarrow import fs


def read_delta(table_dir: Path | str, columns: list[str] | None = None) -> pa.Table:
    """The table's current snapshot. Files are read through a pyarrow filesystem rooted at the
    table: delta-rs' own object store intermittently aborts the process at exit
    (delta-io/delta-rs#2184), which would fail a test run after its tests passed."""
    table_dir = str(table_dir)
    files = fs.SubTreeFileSystem(table_dir, fs.LocalFileSystem())
    return DeltaTable(table_dir).to_pyarrow_table(columns=columns, filesystem=files)
