"""Which technique an incremental mart's run takes, chosen by cost before it compiles.

A mart (an incremental model whose post-hook records the source versions it consumed,
MART_HOOK) whose inputs moved can be brought up to date two ways, both equal to a full refresh:

- ``keys``: find the keys its sources' changes reach (change feeds, a key set evaluated once,
  literal predicates), recompute those keys, MERGE them. A handful of statements of its own
  before the model's SQL: worth it when the tables are large and few keys changed.
- ``whole``: run the model's full build SQL and MERGE it, deleting the rows it no longer
  selects; the MERGE updates only the rows that differ, so readers of the mart's change feed
  see the same changes as after ``keys``. No feed read, no key set, no literals: on small
  tables, or when most of a source changed, it is the cheaper of the two.
- ``tenants``: ``whole``, but only for the tenants whose rows the inputs' commits since the
  node's last success wrote (the tenant partitions those commits name): the full build SQL
  filtered to them, MERGEd with only their rows deleted when no longer selected. The other
  tenants' files are neither read nor written, but each scan with the filter costs a file-
  skipping job: on large tables only, where those tenants hold little or most of their bytes
  changed. It needs those tenants known: the node runs only because tables it reads moved
  (not for new code, a clock or a full refresh), every moved table is partitioned by tenant
  and its log since then is kept, and the mart is keyed by tenant.

(A node whose inputs did not move is skipped before either: profile_lake.run_state.)

The run as a whole also chooses, before its session starts, whether Spark compiles its queries
to Java bytecode (choose_code_generation): compiling costs a fixed amount per query and repays
it only on large scans; and in how many tasks it shuffles and rebuilds a Delta table's state
(choose_task_partitions): each task deserializes its stage's plan, which on a few rows costs
more than the rows.

The choice reads only what the Delta logs already say: each table's size (its latest
checksum file) and the bytes of the rows the sources' commits since the node's last success
changed (delta_log.changed_bytes_since: a MERGE that rewrote every file to change a few rows
changed a few rows' bytes). The
thresholds are here and nowhere else; `--vars '{mart_technique: keys}'` (or `tenants`, or
`whole`) forces one, as the equivalence test does.

Pure logic: profile_lake.run_planner reads the sizes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

KEYS = "keys"
WHOLE = "whole"
TENANTS = "tenants"
# the column every tenant-partitioned table of the lake is partitioned by
TENANT_COLUMN = "tenant_id"
# the post-hook of the mart idiom (docs/development.md): only such models choose a technique
MART_HOOK = "record_consumed_versions"
AUTO = "auto"
FORCEABLE = (KEYS, WHOLE, TENANTS)
# Reading this much whole costs less than the statements of finding the changed keys (each
# about 0.2 s of planning and a job; bench/bench_run_floor.py): the tables of a mart's
# inputs and of the mart itself, added up.
WHOLE_MAX_BYTES = 64 * 1024 * 1024
# When the sources' commits since the last run changed at least this share of their bytes, most
# keys changed: the key path would read nearly every file anyway.
WHOLE_MIN_CHANGED_SHARE = 0.5
MB = 1024 * 1024
# Whole-stage code generation compiles every query's stages to Java bytecode: a fixed cost of
# planning and compiling per query, repaid only when its scans process many rows. On a lake
# whose largest table holds at most this much, interpreted plans finish first
# (bench/bench_run_floor.py).
CODEGEN_MAX_INTERPRETED_BYTES = 64 * 1024 * 1024
# With plans interpreted, the driver JVM compiles its own hot code with the quick C1 compiler
# alone: the optimizing C2 compiler spends a core for much of a short run on code that a few
# rows never repay (bench/README.md, JIT row). C1 alone fills more of the code cache, and on the
# small heap such a lake needs the serial collector keeps garbage collection to one thread.
# A JVM's flags are fixed at its start: a watcher keeps those of the lake it started on.
QUICK_JIT_OPTIONS = (
    "-XX:TieredStopAtLevel=1",
    "-XX:ReservedCodeCacheSize=512m",
    "-XX:+UseSerialGC",
)
CODEGEN_ON = "true"
CODEGEN_OFF = "false"
CODEGEN_SETTINGS = (AUTO, CODEGEN_ON, CODEGEN_OFF)
# Spark's settings for the tasks a shuffle and Delta's rebuild of a table's state split into.
SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
SNAPSHOT_PARTITIONS = "spark.databricks.delta.snapshotPartitions"
# On a lake whose largest table holds at most this much, one task each: a task deserializes
# its stage's plan, which costs more than a few rows (bench/README.md, task counts).
ONE_TASK_MAX_BYTES = 64 * 1024 * 1024
# past it, tasks for both cores of the default machine (docs/targets.md)
LARGE_LAKE_PARTITIONS = {SHUFFLE_PARTITIONS: 4, SNAPSHOT_PARTITIONS: 2}
# On such a lake, with both task counts `auto`, two more of Spark's settings follow the same
# reasoning (bench/README.md, bench_run_floor.py). Adaptive execution re-plans the rest of a
# query after each of its stages, to merge or split their tasks and switch joins: with one task
# a stage there is nothing to merge or split and every table is small enough to broadcast, so
# it is off and a query runs as one planned job. A scan of small files is split into at least
# `spark.default.parallelism` tasks (4): one task reads them all.
ADAPTIVE_EXECUTION = "spark.sql.adaptive.enabled"
FILE_SCAN_MIN_PARTITIONS = "spark.sql.files.minPartitionNum"
ONE_TASK_LAKE_SETTINGS = {ADAPTIVE_EXECUTION: "false", FILE_SCAN_MIN_PARTITIONS: "1"}
# the environment variable each setting comes from (profiles/profiles.yml)
PARTITION_ENV = {
    SHUFFLE_PARTITIONS: "PROFILE_LAKE_SHUFFLE_PARTITIONS",
    SNAPSHOT_PARTITIONS: "PROFILE_LAKE_SNAPSHOT_PARTITIONS",
}


class TechniqueError(ValueError):
    """A var `mart_technique` that is none of the techniques."""


@dataclass(frozen=True)
class TableCost:
    """What the log says of one table a node reads or writes: its size (None: unknown, e.g.
    not on this machine's file system), the bytes of the rows its commits since the node's last
    success changed (None: not known) and, for a mart's own table partitioned by tenant, how many
    tenants it holds (None: not known)."""

    name: str
    size_bytes: int | None
    changed_bytes: int | None = None
    tenant_count: int | None = None


@dataclass(frozen=True)
class Technique:
    name: str
    reason: str
    # TENANTS: the tenants recomputed (sorted)
    tenants: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "reason": self.reason, "tenants": list(self.tenants)}

    @property
    def recomputes_whole(self) -> bool:
        """Whether the run MERGEs the model's full build SQL (of some tenants or all)."""
        return self.name in (WHOLE, TENANTS)

    def describe(self) -> str:
        return f"{self.name}: {self.reason}"


# how a node's message in the run history says its technique (the adapter's with_technique)
TECHNIQUE_SAID = "technique "


def technique_said(message: str | None) -> tuple[str, str] | None:
    """(name, reason) of the technique a node's run-history message says (`...; technique
    <name>: <reason>`), None when it says none (a skipped node, a model outside the marts)."""
    text = message or ""
    if TECHNIQUE_SAID not in text:
        return None
    name, _, reason = text.split(TECHNIQUE_SAID, 1)[1].partition(":")
    return name.strip(), reason.strip()


def forced_technique(value: object) -> str:
    """The technique var `mart_technique` forces, or AUTO; anything else stops the run."""
    text = str(value or AUTO).strip().lower()
    if text != AUTO and text not in FORCEABLE:
        raise TechniqueError(
            f"var mart_technique is {value!r}: use auto (the default: chosen by cost), "
            f"{KEYS}, {TENANTS} or {WHOLE}."
        )
    return text


def _mb(size: int) -> str:
    return f"{size / MB:.1f} MB"


def choose_technique(
    forced: str,
    target: TableCost,
    sources: Sequence[TableCost],
    touched_tenants: frozenset[str] | None = None,
) -> Technique:
    """The technique of a mart's incremental run that writes `target` from `sources`.
    `touched_tenants`: the tenants whose rows the moved tables' commits wrote since the node's
    last success, when the run may recompute only them (None: not known, or not allowed)."""
    if forced in (KEYS, WHOLE):
        return Technique(forced, "forced by var mart_technique")
    if forced == TENANTS:
        if touched_tenants is None:
            return Technique(WHOLE, "forced tenants, but the tenants written are not known")
        return _of_tenants("forced by var mart_technique", touched_tenants)
    tables = [target, *sources]
    unknown = [table.name for table in tables if table.size_bytes is None]
    if unknown:
        return Technique(KEYS, f"the size of {unknown[0]} is not known")
    total = sum(table.size_bytes or 0 for table in tables)
    if total <= WHOLE_MAX_BYTES:
        # a tenant filter would cost a file-skipping job per scan: more than reading all
        return Technique(
            WHOLE, f"its tables hold {_mb(total)}, at most {_mb(WHOLE_MAX_BYTES)}: read whole"
        )
    source_bytes = sum(table.size_bytes or 0 for table in sources)
    changed = sum(table.changed_bytes or 0 for table in sources)
    if source_bytes and changed >= WHOLE_MIN_CHANGED_SHARE * source_bytes:
        reason = f"{changed / source_bytes:.0%} of its sources' bytes changed since its last run"
        if touched_tenants is None:
            return Technique(WHOLE, reason)
        return _of_tenants(reason, touched_tenants)
    if touched_tenants is not None and target.tenant_count:
        # the tenants written hold about their share of the bytes (tenants differ in size;
        # the share is what the log gives without listing every file)
        share = min(1.0, len(touched_tenants) / target.tenant_count)
        tenants_bytes = total * share
        if tenants_bytes <= WHOLE_MAX_BYTES:
            return _of_tenants(
                f"its tables hold {_mb(total)}, the tenants written about {_mb(tenants_bytes)}, "
                f"at most {_mb(WHOLE_MAX_BYTES)}: read those whole",
                touched_tenants,
            )
        if source_bytes and changed >= WHOLE_MIN_CHANGED_SHARE * source_bytes * share:
            return _of_tenants(
                f"{changed / (source_bytes * share):.0%} of the written tenants' bytes changed "
                "since its last run",
                touched_tenants,
            )
    return Technique(
        KEYS, f"its tables hold {_mb(total)}, over {_mb(WHOLE_MAX_BYTES)}: the changed keys only"
    )


def _of_tenants(reason: str, touched: frozenset[str]) -> Technique:
    names = sorted(touched)
    listed = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    if not names:
        written = "its inputs wrote no tenant's rows"
    elif len(names) == 1:
        written = f"the tenant its inputs wrote ({listed})"
    else:
        written = f"the {len(names)} tenants its inputs wrote ({listed})"
    return Technique(TENANTS, f"{reason}; {written}", tuple(names))


class CodeGenerationError(ValueError):
    """A PROFILE_LAKE_CODEGEN that is none of auto, true, false."""


@dataclass(frozen=True)
class CodeGeneration:
    """Whether the run's Spark session compiles its queries, and why."""

    on: bool
    reason: str

    def spark_settings(self) -> dict[str, str]:
        """Off, Spark interprets plans and expressions as its own tests do (no fallback)."""
        return {
            "spark.sql.codegen.wholeStage": CODEGEN_ON if self.on else CODEGEN_OFF,
            "spark.sql.codegen.factoryMode": "FALLBACK" if self.on else "NO_CODEGEN",
        }

    def driver_java_options(self, chosen: str) -> str:
        """The driver JVM's options `chosen` (the profile's, PROFILE_LAKE_JVM_OPTIONS), with
        QUICK_JIT_OPTIONS when plans are interpreted, each unless `chosen` already sets it."""
        if self.on:
            return chosen
        added = [option for option in QUICK_JIT_OPTIONS if not _sets(chosen, option)]
        return " ".join([chosen, *added]).strip()


def _option_name(option: str) -> str:
    """What a JVM option sets: `-XX:+UseSerialGC` and `-XX:-UseSerialGC` both UseSerialGC,
    `-XX:TieredStopAtLevel=1` TieredStopAtLevel."""
    return option.split("=")[0].lstrip("-X:+")


def _sets(options: str, option: str) -> bool:
    """Whether JVM `options` already set what `option` sets (a garbage collector: any)."""
    name = _option_name(option)
    names = {_option_name(word) for word in options.split()}
    if name.startswith("Use") and name.endswith("GC"):
        return any(other.startswith("Use") and other.endswith("GC") for other in names)
    return name in names


def code_generation_setting(value: object) -> str:
    """The setting PROFILE_LAKE_CODEGEN gives (auto when unset); anything else stops the run."""
    text = str(value or AUTO).strip().lower()
    if text not in CODEGEN_SETTINGS:
        raise CodeGenerationError(
            f"PROFILE_LAKE_CODEGEN is {value!r}: use auto (the default: by the lake's size), "
            f"{CODEGEN_ON} or {CODEGEN_OFF}."
        )
    return text


def choose_code_generation(setting: str, data_bytes: int | None) -> CodeGeneration:
    """Code generation for a run over a lake whose largest table (or, before the first build,
    whose landing folder) holds `data_bytes` (None: not known, e.g. not on this machine)."""
    if setting != AUTO:
        return CodeGeneration(setting == CODEGEN_ON, "set by PROFILE_LAKE_CODEGEN")
    if data_bytes is None:
        return CodeGeneration(True, "the lake's size is not known")
    if data_bytes <= CODEGEN_MAX_INTERPRETED_BYTES:
        return CodeGeneration(
            False,
            f"the lake's largest table holds {_mb(data_bytes)}, "
            f"at most {_mb(CODEGEN_MAX_INTERPRETED_BYTES)}: plans interpreted",
        )
    return CodeGeneration(
        True,
        f"the lake's largest table holds {_mb(data_bytes)}, "
        f"over {_mb(CODEGEN_MAX_INTERPRETED_BYTES)}: plans compiled",
    )


class TaskPartitionsError(ValueError):
    """A PROFILE_LAKE_SHUFFLE_PARTITIONS or PROFILE_LAKE_SNAPSHOT_PARTITIONS that is neither
    auto nor a whole number from 1."""


def partition_setting(name: str, value: object) -> str:
    """The setting of Spark's `name` (one of PARTITION_ENV) the profile gives: auto when
    unset, else a whole number from 1; anything else stops the run."""
    text = str(value or AUTO).strip().lower()
    if text == AUTO or (text.isdigit() and int(text) >= 1):
        return text
    raise TaskPartitionsError(
        f"{PARTITION_ENV[name]} is {value!r}: use auto (the default: by the lake's size) "
        "or a whole number from 1."
    )


@dataclass(frozen=True)
class TaskPartitions:
    """How many tasks the run's shuffles and Delta's rebuilds of table state split into."""

    counts: dict[str, int]
    reason: str
    # ONE_TASK_LAKE_SETTINGS where they apply, else none (the profile's)
    settings: dict[str, str] = field(default_factory=dict)

    def spark_settings(self) -> dict[str, str]:
        return {**{name: str(count) for name, count in self.counts.items()}, **self.settings}


def _task_count(name: str, setting: str, small: bool) -> int:
    if setting != AUTO:
        return int(setting)
    return 1 if small else LARGE_LAKE_PARTITIONS[name]


def choose_task_partitions(settings: dict[str, str], data_bytes: int | None) -> TaskPartitions:
    """The task counts for a run over a lake whose largest table (or, before the first build,
    whose landing folder) holds `data_bytes` (None: not known), given each setting of
    partition_setting; a number set stands. Where every count is one task chosen by `auto`,
    ONE_TASK_LAKE_SETTINGS apply too; otherwise those stay as the profile sets them."""
    small = data_bytes is not None and data_bytes <= ONE_TASK_MAX_BYTES
    counts = {name: _task_count(name, settings[name], small) for name in PARTITION_ENV}
    if all(settings[name] != AUTO for name in PARTITION_ENV):
        return TaskPartitions(counts, "set by PROFILE_LAKE_*_PARTITIONS")
    if data_bytes is None:
        return TaskPartitions(counts, "the lake's size is not known")
    if small and all(settings[name] == AUTO for name in PARTITION_ENV):
        return TaskPartitions(
            counts,
            f"the lake's largest table holds {_mb(data_bytes)}, at most "
            f"{_mb(ONE_TASK_MAX_BYTES)}: one task, no adaptive re-planning",
            dict(ONE_TASK_LAKE_SETTINGS),
        )
    size = (
        f"at most {_mb(ONE_TASK_MAX_BYTES)}: one task"
        if small
        else f"over {_mb(ONE_TASK_MAX_BYTES)}: a task per core"
    )
    return TaskPartitions(counts, f"the lake's largest table holds {_mb(data_bytes)}, {size}")
