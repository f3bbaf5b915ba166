"""A migration's plan: preflight, the target schema, batches, resume points, change detection.

Pure logic over the footer facts of profile_lake.migration.source; the plan is saved as JSON
when a migration starts, so a resumed run works through exactly the batches and files the
first run planned.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date

from profile_lake.migration.source import Listing, SourceFile

STRATEGIES = ("in_place", "shadow")
# Arrow types (as pyarrow prints them) to Spark SQL types; anything else is reported.
_ARROW_TO_SPARK = {
    "bool": "boolean",
    "int8": "tinyint",
    "int16": "smallint",
    "int32": "int",
    "int64": "bigint",
    "float": "float",
    "double": "double",
    "string": "string",
    "large_string": "string",
    "binary": "binary",
    "large_binary": "binary",
    "date32[day]": "date",
}
# Types a column may widen to when later files carry it wider (Delta's type widening order).
_WIDER = {"tinyint": 0, "smallint": 1, "int": 2, "bigint": 3}
_INT = re.compile(r"^-?\d{1,18}$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def spark_type(arrow_type: str) -> str | None:
    """The Spark SQL type of an Arrow type string; None when the migration cannot carry it."""
    if arrow_type in _ARROW_TO_SPARK:
        return _ARROW_TO_SPARK[arrow_type]
    if arrow_type.startswith("timestamp["):
        return "timestamp"
    match = re.fullmatch(r"decimal128\((\d+), (\d+)\)", arrow_type)
    if match:
        return f"decimal({match.group(1)},{match.group(2)})"
    match = re.fullmatch(r"(?:large_)?list<(?:item|element): (.+?)(?: not null)?>", arrow_type)
    if match:
        inner = spark_type(match.group(1))
        return None if inner is None else f"array<{inner}>"
    return None


@dataclass(frozen=True)
class SchemaReport:
    columns: tuple[tuple[str, str], ...]  # the target's data columns, in first-seen order
    added: tuple[tuple[str, str], ...]  # (column, first file that has it): missing before
    problems: tuple[str, ...]  # blocking differences


def unify_schema(files: Sequence[SourceFile]) -> SchemaReport:
    """One schema over every file: a column missing from earlier files is added (null there),
    integer columns widen; any other disagreement is a problem naming two files."""
    columns: dict[str, str] = {}
    seen_in: dict[str, str] = {}
    problems: list[str] = []
    first_file = files[0].path if files else ""
    for source in files:
        for name, arrow_type in source.columns:
            target = spark_type(arrow_type)
            if target is None:
                problems.append(f"column {name} of {source.path}: type {arrow_type} not supported")
                continue
            if name not in columns:
                columns[name], seen_in[name] = target, source.path
            elif columns[name] != target:
                wider = _widen(columns[name], target)
                if wider is None:
                    problems.append(
                        f"column {name} is {columns[name]} in {seen_in[name]} but {target} "
                        f"in {source.path}"
                    )
                else:
                    columns[name] = wider
    added = tuple(
        (name, path)
        for name, path in seen_in.items()
        if any(name not in dict(source.columns) for source in files) and path != first_file
    )
    return SchemaReport(tuple(columns.items()), added, tuple(problems))


def _widen(one: str, other: str) -> str | None:
    if one in _WIDER and other in _WIDER:
        return one if _WIDER[one] >= _WIDER[other] else other
    return None


def parses_as(value: str | None, spark_type_name: str) -> bool:
    if value is None:
        return True
    if spark_type_name in ("int", "bigint"):
        return bool(_INT.match(value))
    if spark_type_name == "date":
        if not _DATE.match(value):
            return False
        try:
            date.fromisoformat(value)
        except ValueError:
            return False
        return True
    return spark_type_name == "string"


def partition_columns(
    files: Sequence[SourceFile], declared: Mapping[str, str]
) -> tuple[tuple[tuple[str, str], ...], list[str]]:
    """The partition columns (name, type) and the problems: folders that disagree on the
    partition columns, values that do not parse as their declared type. Undeclared types are
    inferred: bigint when every value is an integer, date when every value is a date, else
    string (so they always parse)."""
    problems: list[str] = []
    names = tuple(name for name, _ in files[0].partition) if files else ()
    for source in files:
        found = tuple(name for name, _ in source.partition)
        if found != names:
            problems.append(
                f"{source.path}: partition folders {list(found)} differ from {list(names)} "
                f"of {files[0].path}"
            )
    typed: list[tuple[str, str]] = []
    for position, name in enumerate(names):
        values = [
            source.partition[position][1] for source in files if len(source.partition) > position
        ]
        type_name = declared.get(name) or _infer(values)
        typed.append((name, type_name))
        for source in files:
            if len(source.partition) > position:
                value = source.partition[position][1]
                if not parses_as(value, type_name):
                    problems.append(
                        f"{source.path}: partition value {name}={value} is not a {type_name}"
                    )
    unknown = sorted(set(declared) - set(names))
    problems.extend(
        f"declared partition column {name} is not a partition folder" for name in unknown
    )
    return tuple(typed), problems


def _infer(values: Iterable[str | None]) -> str:
    present = [value for value in values if value is not None]
    if present and all(_INT.match(value) for value in present):
        return "bigint"
    if present and all(parses_as(value, "date") for value in present):
        return "date"
    return "string"


@dataclass(frozen=True)
class Preflight:
    """What the preflight found; `ok` when nothing blocks a migration."""

    files: int
    rows: int
    bytes: int
    partition_columns: tuple[tuple[str, str], ...]
    schema: SchemaReport
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def describe(self) -> str:
        lines = [
            f"preflight: {self.files} files, {self.rows:,} rows, {self.bytes:,} bytes",
            "partition columns: "
            + (", ".join(f"{n} {t}" for n, t in self.partition_columns) or "none"),
            "columns: " + ", ".join(f"{n} {t}" for n, t in self.schema.columns),
        ]
        lines += [
            f"schema drift: column {name} first appears in {path} (null in earlier files)"
            for name, path in self.schema.added
        ]
        if self.problems:
            lines.append(f"{len(self.problems)} problem(s); fix them and run the migration again:")
            lines += [f"  - {problem}" for problem in self.problems]
        else:
            lines.append("no problem found")
        return "\n".join(lines)


def preflight(
    listing: Listing,
    declared_partition_types: Mapping[str, str] | None = None,
    key_columns: Sequence[str] = (),
    target_exists: str | None = None,
) -> Preflight:
    """Every footer readable, one schema, partition values that parse, keys present, the
    target free (`target_exists`: the name of the table already there, if any)."""
    files = listing.files
    problems = [f"{bad.path}: footer unreadable ({bad.reason})" for bad in listing.unreadable]
    problems += [f"{path}: folder is not a name=value partition" for path in listing.bad_folders]
    if not files and not listing.unreadable:
        problems.append("no data file found")
    partitions, partition_problems = partition_columns(files, declared_partition_types or {})
    problems += partition_problems
    schema = unify_schema(files)
    problems += schema.problems
    known = {name for name, _ in schema.columns} | {name for name, _ in partitions}
    problems += [f"key column {key} is in no file" for key in key_columns if key not in known]
    if target_exists:
        problems.append(f"target table {target_exists} already exists: choose another --target")
    return Preflight(
        files=len(files),
        rows=sum(source.rows for source in files),
        bytes=sum(source.size for source in files),
        partition_columns=partitions,
        schema=schema,
        problems=tuple(problems),
    )


@dataclass(frozen=True)
class Batch:
    index: int
    label: str  # the partition (`tenant_id=acme/dt=2024-01-05`) or "all"
    files: tuple[str, ...]
    rows: int


def plan_batches(
    files: Sequence[SourceFile], max_files_per_batch: int = 64, min_batch_bytes: int = 0
) -> list[Batch]:
    """One batch per partition, split into groups of at most `max_files_per_batch` files, in
    partition order, numbered from 0: the unit that a shadow commits, resumes and audits.
    With `min_batch_bytes`, consecutive groups smaller than that are packed together (up to
    the file limit), so a dataset of many small partitions is not paid for in commits: each
    batch costs a Spark job and a Delta commit whatever its size."""
    if max_files_per_batch < 1:
        raise ValueError("max_files_per_batch must be at least 1")
    groups: dict[str, list[SourceFile]] = {}
    for source in sorted(files, key=lambda f: f.path):
        label = "/".join(f"{n}={v}" for n, v in source.partition) or "all"
        groups.setdefault(label, []).append(source)
    chunks: list[tuple[list[str], list[SourceFile]]] = []  # (partition labels, files)
    for label in sorted(groups):
        members = groups[label]
        for start in range(0, len(members), max_files_per_batch):
            chunk = members[start : start + max_files_per_batch]
            last = chunks[-1] if chunks else None
            if (
                last is not None
                and sum(f.size for f in last[1]) < min_batch_bytes
                and len(last[1]) + len(chunk) <= max_files_per_batch
            ):
                last[0].append(label)
                last[1].extend(chunk)
            else:
                chunks.append(([label], list(chunk)))
    return [
        Batch(
            index,
            labels[0] if len(labels) == 1 else f"{labels[0]} .. {labels[-1]}",
            tuple(f.path for f in chunk),
            sum(f.rows for f in chunk),
        )
        for index, (labels, chunk) in enumerate(chunks)
    ]


@dataclass(frozen=True)
class Plan:
    """Everything a migration decided before it moved a row; saved as JSON."""

    migration_id: str
    strategy: str
    source_root: str
    target: str
    key_columns: tuple[str, ...]
    partition_columns: tuple[tuple[str, str], ...]
    columns: tuple[tuple[str, str], ...]
    files: dict[str, tuple[int, int, int]]  # path -> (size, mtime_ns, rows)
    batches: tuple[Batch, ...]
    contract: dict[str, object] = field(default_factory=dict)
    source_table: str | None = None

    @property
    def rows(self) -> int:
        return sum(batch.rows for batch in self.batches)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Plan:
        data = json.loads(text)
        return cls(
            migration_id=data["migration_id"],
            strategy=data["strategy"],
            source_root=data["source_root"],
            target=data["target"],
            key_columns=tuple(data["key_columns"]),
            partition_columns=tuple(tuple(pair) for pair in data["partition_columns"]),  # type: ignore[misc]
            columns=tuple(tuple(pair) for pair in data["columns"]),  # type: ignore[misc]
            files={path: tuple(facts) for path, facts in data["files"].items()},  # type: ignore[misc]
            batches=tuple(
                Batch(b["index"], b["label"], tuple(b["files"]), b["rows"]) for b in data["batches"]
            ),
            contract=data.get("contract", {}),
            source_table=data.get("source_table"),
        )


def make_plan(
    migration_id: str,
    strategy: str,
    source_root: str,
    target: str,
    listing: Listing,
    report: Preflight,
    key_columns: Sequence[str],
    max_files_per_batch: int = 64,
    contract: Mapping[str, object] | None = None,
    source_table: str | None = None,
    min_batch_bytes: int = 0,
) -> Plan:
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    if not report.ok:
        raise ValueError("the preflight found problems:\n" + report.describe())
    return Plan(
        migration_id=migration_id,
        strategy=strategy,
        source_root=source_root,
        target=target,
        key_columns=tuple(key_columns),
        partition_columns=report.partition_columns,
        columns=report.schema.columns,
        files={f.path: (f.size, f.mtime_ns, f.rows) for f in listing.files},
        batches=tuple(plan_batches(listing.files, max_files_per_batch, min_batch_bytes)),
        contract=dict(contract or {}),
        source_table=source_table,
    )


def changed_files(
    planned: Mapping[str, Sequence[int]], current: Mapping[str, Sequence[int]]
) -> list[str]:
    """Descriptions of the files that changed since the plan read them: rewritten (size or
    modification time), removed, or added."""
    changes = []
    for path in sorted(set(planned) | set(current)):
        if path not in current:
            changes.append(f"{path} was removed")
        elif path not in planned:
            changes.append(f"{path} was added")
        elif tuple(planned[path][:2]) != tuple(current[path][:2]):
            changes.append(f"{path} was rewritten (size or modification time changed)")
    return changes


def files_to_scan(files: Sequence[SourceFile], null_checked: Sequence[str] | None) -> list[str]:
    """The files a contract must read to find its bad rows. When the contract's rules are all
    "not null" on `null_checked` columns, only the files whose footers cannot clear them: a
    null counted, statistics not recorded, or the column absent (null in every row; a
    partition column is null only in a `__HIVE_DEFAULT_PARTITION__` folder). Otherwise (a rule
    on values, `null_checked` None) every file with rows."""
    suspects = []
    for source in files:
        if source.rows == 0:
            continue
        if null_checked is None:
            suspects.append(source.path)
            continue
        partition = dict(source.partition)
        nulls = dict(source.null_counts)
        for column in null_checked:
            if column in partition:
                if partition[column] is None:
                    break
            elif nulls.get(column) != 0:  # None (unknown), absent, or some nulls
                break
        else:
            continue
        suspects.append(source.path)
    return suspects


@dataclass(frozen=True)
class BatchState:
    """What the lake holds of a batch: its shadow commit (if any) and its quarantined rows."""

    committed_version: int | None = None
    migrated: int = 0
    quarantined: int = 0


@dataclass(frozen=True)
class BatchAction:
    batch: Batch
    hydrate: bool  # write the batch's rows to the shadow (then its bad rows)
    quarantine_only: bool  # the shadow has it, its bad rows are not all quarantined yet


def resume_actions(batches: Sequence[Batch], states: Mapping[int, BatchState]) -> list[BatchAction]:
    """What is left to do, batch by batch: a batch not committed to the shadow is hydrated; one
    committed whose quarantined rows fall short of rows - migrated (a run killed between the
    two commits) gets only its quarantine. A finished batch is never written again."""
    actions = []
    for batch in batches:
        state = states.get(batch.index, BatchState())
        if state.committed_version is None:
            actions.append(BatchAction(batch, hydrate=True, quarantine_only=False))
        elif state.migrated + state.quarantined < batch.rows:
            actions.append(BatchAction(batch, hydrate=False, quarantine_only=True))
    return actions


@dataclass(frozen=True)
class AuditFacts:
    """What the audit measured of the source and the table."""

    batch_states: Mapping[int, BatchState]
    table_rows: int
    table_columns: tuple[tuple[str, str], ...]
    source_checksum: int  # over the key columns of every source row
    quarantined_checksum: int  # the same over the quarantined rows
    table_checksum: int
    changes: tuple[str, ...] = ()


def audit_differences(plan: Plan, facts: AuditFacts) -> list[str]:
    """Every way the table differs from the source less the quarantined rows; empty when the
    audit passes."""
    differences = [f"source file changed after it was read: {change}" for change in facts.changes]
    # in place, a batch is not a commit: the audit compares totals (the footers' and the table's)
    for batch in plan.batches if plan.strategy == "shadow" else ():
        state = facts.batch_states.get(batch.index, BatchState())
        if state.committed_version is None:
            differences.append(f"batch {batch.index} ({batch.label}) is not in the table")
        elif state.migrated + state.quarantined != batch.rows:
            differences.append(
                f"batch {batch.index} ({batch.label}): {batch.rows} source rows but "
                f"{state.migrated} migrated + {state.quarantined} quarantined"
            )
    quarantined = sum(state.quarantined for state in facts.batch_states.values())
    if facts.table_rows + quarantined != plan.rows:
        differences.append(
            f"total: {plan.rows} source rows but {facts.table_rows} in the table + "
            f"{quarantined} quarantined"
        )
    expected_columns = {name: kind for name, kind in (*plan.columns, *plan.partition_columns)}
    found_columns = dict(facts.table_columns)
    if expected_columns != found_columns:
        missing = sorted(set(expected_columns) - set(found_columns))
        extra = sorted(set(found_columns) - set(expected_columns))
        retyped = sorted(
            f"{name} {expected_columns[name]} -> {found_columns[name]}"
            for name in set(expected_columns) & set(found_columns)
            if expected_columns[name] != found_columns[name]
        )
        differences.append(f"schema: missing {missing}, extra {extra}, retyped {retyped}")
    # in place the table's files are the source's: the footers' counts are what can differ
    if plan.strategy == "shadow" and (
        facts.source_checksum - facts.quarantined_checksum != facts.table_checksum
    ):
        differences.append(
            f"checksum over the key columns {list(plan.key_columns)}: source less quarantined "
            f"{facts.source_checksum - facts.quarantined_checksum}, table {facts.table_checksum}"
        )
    return differences
