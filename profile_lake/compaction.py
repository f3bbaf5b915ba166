"""Bounded files: which partitions of a table a run compacts after writing it, and how.

Every incremental write adds files: a MERGE writes its changed rows to new files (deletion
vectors mark the old rows), an append adds its rows. Left alone, a partition written by a
thousand runs holds a thousand small files, and every scan of it opens each one. So after an
incremental model writes its table, the partitions that hold `max_small_files` files or more
smaller than SMALL_FILE_BYTES are compacted at once by one OPTIMIZE, Z-ordered by the model's
`zorder_by` where it has one (a Z-order is not incremental: it rewrites the partition whole).

Delta's own auto-compaction is not used: it keeps its counts of small files in the JVM, so
every new process (every run from the shell) compacts what it first writes, and it does not
keep a Z-order. The file lists come from the Delta log, with no Spark statement.

A run compacts only partitions it may write: on a table partitioned by `tenant_id`, a run of
some tenants compacts those tenants' partitions alone (another run may be merging into the
others, and a MERGE whose files a compaction removed fails); any other table is written by
one run at a time (the whole-lake lock) or only appended to, which a compaction does not
disturb. The threshold is measured in bench/bench_compaction.py (bench/README.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from profile_lake.sql import sql_string
from profile_lake.techniques import TENANT_COLUMN

# A file under this size counts as small: OPTIMIZE writes files of up to 1 GB, so a partition
# under that size is one file after it, and a run adds files far smaller than this.
SMALL_FILE_BYTES = 32 * 1024 * 1024
# The default of var compaction_max_small_files: a little below the limit of least total cost
# that bench/bench_compaction.py measures on local disk (bench/README.md). On object storage a
# file costs a scan far more: set the var lower there.
MAX_SMALL_FILES = 64
# Below this a compaction would run after nearly every write.
LEAST_MAX_SMALL_FILES = 2

Partition = tuple[tuple[str, str | None], ...]


class CompactionError(ValueError):
    """A setting of the compaction that cannot be used, said so the user can fix it."""


@dataclass(frozen=True)
class DataFile:
    """One live data file of a table: its partition values (column, value as text) and size."""

    partition: Partition
    size: int


@dataclass(frozen=True)
class Compaction:
    """The partitions a run compacts (each with its count of small files) and the statement."""

    table: str
    partitions: dict[Partition, int]
    statement: str

    def describe(self) -> str:
        counts = sorted(self.partitions.values(), reverse=True)
        shown = ", ".join(str(count) for count in counts[:5]) + ("…" if len(counts) > 5 else "")
        unit = "partition" if len(counts) == 1 else "partitions"
        return f"{self.table}: compacting {len(counts)} {unit} of {shown} small files"


def max_small_files_setting(value: object) -> int:
    """Var compaction_max_small_files, checked: a whole number of at least 2 (None: the
    default, MAX_SMALL_FILES)."""
    if value is None:
        return MAX_SMALL_FILES
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise CompactionError(_setting_message(value))
    try:
        number = int(value)
    except ValueError:
        raise CompactionError(_setting_message(value)) from None
    if number < LEAST_MAX_SMALL_FILES:
        raise CompactionError(_setting_message(value))
    return number


def _setting_message(value: object) -> str:
    return (
        f"var compaction_max_small_files is {value!r}: give a whole number of at least "
        f"{LEAST_MAX_SMALL_FILES}, the small files a partition may hold before a run compacts it "
        f"(default {MAX_SMALL_FILES})"
    )


def small_file_counts(files: Iterable[DataFile]) -> dict[Partition, int]:
    """How many small files each partition holds (partitions without one are left out)."""
    counts: dict[Partition, int] = {}
    for file in files:
        if file.size < SMALL_FILE_BYTES:
            counts[file.partition] = counts.get(file.partition, 0) + 1
    return counts


def partitions_to_compact(
    files: Iterable[DataFile], max_small_files: int, tenants: Sequence[str] | None
) -> dict[Partition, int]:
    """The partitions holding `max_small_files` small files or more that the run may compact:
    with `tenants` (a run of some tenants), only those of a table partitioned by tenant_id."""
    allowed = None if tenants is None else set(tenants)
    due: dict[Partition, int] = {}
    for partition, count in small_file_counts(files).items():
        if count < max_small_files:
            continue
        values = dict(partition)
        if allowed is not None and TENANT_COLUMN in values and values[TENANT_COLUMN] not in allowed:
            continue
        due[partition] = count
    return due


def partition_predicate(partitions: Iterable[Partition]) -> str | None:
    """A WHERE clause on the partition columns selecting exactly `partitions`; None for the
    one partition of an unpartitioned table (OPTIMIZE then takes the whole table)."""
    terms = sorted({_partition_term(partition) for partition in partitions if partition})
    if not terms:
        return None
    return " or ".join(f"({term})" for term in terms)


def _partition_term(partition: Partition) -> str:
    return " and ".join(
        f"{column} is null" if value is None else f"{column} = {sql_string(value)}"
        for column, value in partition
    )


def optimize_statement(
    table: str, partitions: Iterable[Partition], zorder_by: Sequence[str] | str | None
) -> str:
    """OPTIMIZE of `partitions` of `table`, Z-ordered by `zorder_by` when given."""
    where = partition_predicate(partitions)
    columns = [zorder_by] if isinstance(zorder_by, str) else list(zorder_by or [])
    statement = f"optimize {table}"
    if where:
        statement += f" where {where}"
    if columns:
        statement += f" zorder by ({', '.join(columns)})"
    return statement


def plan_compaction(
    table: str,
    files: Iterable[DataFile],
    max_small_files: int,
    tenants: Sequence[str] | None,
    zorder_by: Sequence[str] | str | None,
) -> Compaction | None:
    """What a run that wrote `table` compacts, if anything."""
    due = partitions_to_compact(files, max_small_files, tenants)
    if not due:
        return None
    return Compaction(table, due, optimize_statement(table, due, zorder_by))


def data_file(partition_values: Mapping[str, object], size: int) -> DataFile:
    """A DataFile from a log's partition values (any type; null stays None) and size."""
    partition = tuple(
        (column, None if value is None else str(value))
        for column, value in sorted(partition_values.items())
    )
    return DataFile(partition, int(size))
