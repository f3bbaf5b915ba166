"""How much data a lake holds, from its Delta logs (and, before its first build, from its
landing folder): what the run's cost-based choices start from (profile_lake.techniques)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from profile_lake.delta_log import local_warehouse, table_size_bytes
from profile_lake.techniques import (
    AUTO,
    PARTITION_ENV,
    CodeGeneration,
    TaskPartitions,
    choose_code_generation,
    choose_task_partitions,
    code_generation_setting,
    partition_setting,
)

# the profile's code generation setting: auto (by the lake's size), true or false
CODEGEN_SETTING = "spark.sql.codegen.wholeStage"


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


def lake_data_bytes(warehouse_dir: str, landing: Path, source: Path | None = None) -> int | None:
    """The bytes of the lake's largest table; for a lake with no table yet, of the landing
    files its first build reads; at least those of a `source` folder the run reads whole (a
    migration's dataset). None when the warehouse is not on this machine's file system or a
    table's size is not in its log."""
    warehouse = local_warehouse(warehouse_dir)
    if warehouse is None:
        return None
    largest = largest_table_bytes(warehouse)
    if largest is None:
        return None
    data = folder_bytes(landing) if largest == 0 else largest
    return max(data, folder_bytes(source)) if source is not None else data


def session_sizing(
    settings: Mapping[str, str], source: Path | None = None
) -> tuple[CodeGeneration, TaskPartitions]:
    """What a session with the profile's Spark `settings` does by the lake's size: whether it
    compiles its queries (`spark.sql.codegen.wholeStage`, PROFILE_LAKE_CODEGEN: auto, true or
    false) and in how many tasks it shuffles and rebuilds table state (PROFILE_LAKE_SHUFFLE_
    PARTITIONS, PROFILE_LAKE_SNAPSHOT_PARTITIONS: auto or a number), auto deciding by
    lake_data_bytes under their warehouse. CodeGenerationError or TaskPartitionsError on any
    other setting."""
    codegen = code_generation_setting(settings.get(CODEGEN_SETTING))
    partitions = {name: partition_setting(name, settings.get(name)) for name in PARTITION_ENV}
    data_bytes = None
    if AUTO in (codegen, *partitions.values()):
        data_bytes = lake_data_bytes(
            settings.get("spark.sql.warehouse.dir", "spark-warehouse"),
            Path(os.environ.get("PROFILE_LAKE_LANDING", "sample/landing")),
            source,
        )
    return (
        choose_code_generation(codegen, data_bytes),
        choose_task_partitions(partitions, data_bytes),
    )
