"""How much data a lake holds, from its Delta logs (and, before its first build, from its
landing folder): what the run's cost-based choices start from (profile_lake.techniques)."""

from __future__ import annotations

import os
from pathlib import Path

from profile_lake.delta_log import local_warehouse, table_size_bytes


def largest_table_bytes(warehouse: Path) -> int | None:
    """The bytes of the largest Delta table of the warehouse (Spark's layout: schema folders
    `<schema>.db`, tables in them or at the top); 0 with no table, None when a table's size is
    not in its log."""
    logs = [*warehouse.glob("*/_delta_log"), *warehouse.glob("*.db/*/_delta_log")]
    largest = 0
    for log in logs:
        size = table_size_bytes(log.parent)
        if size is None:
            return None
        largest = max(largest, size)
    return largest


def folder_bytes(folder: Path) -> int:
    """The bytes of the files under `folder` (0 when it does not exist)."""
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += (Path(root) / name).stat().st_size
            except OSError:  # removed while listed
                continue
    return total


def lake_data_bytes(warehouse_dir: str, landing: Path) -> int | None:
    """The bytes of the lake's largest table; for a lake with no table yet, of the landing
    files its first build reads. None when the warehouse is not on this machine's file system
    or a table's size is not in its log."""
    warehouse = local_warehouse(warehouse_dir)
    if warehouse is None:
        return None
    largest = largest_table_bytes(warehouse)
    if largest == 0:
        return folder_bytes(landing)
    return largest
