"""Which rows a data test checks: on an incremental `dbt build`, the rows the run wrote.

A test's `where` config holds `rows_this_run()` (or `rows_this_run('last_ingest_batch_id')`,
naming the column holding each row's ingest batch; a second argument names the tenant column).
dbt renders test configs while parsing, with no project macro and no database, so the call is
written as plain text: our get_where_subquery finds it when the test runs and replaces it with
a predicate over the rows this run wrote:

- every row on a full refresh, in `dbt test` (a run that writes nothing checks what it is asked
  to), with the var `full_checks`, and when the run created or replaced the table;
- no row when the run did not commit to the table;
- otherwise the rows whose batch is past their tenant's newest batch in the table's version
  just before the run's first commit (`pre-run watermarks`): the incremental models write only
  such rows, per tenant (docs/checks.md), and rows with no batch at all (a bad row is checked).

A table with no batch column (a mart, MERGEd by key) writes `changes_this_run()` instead: the
rows its Delta change feed shows the run inserted or updated (post-images of the versions the run
committed), read from a session view of that feed, so the test reads what the run wrote and not
the table. A table whose feed is off is checked whole.

Uniqueness tests are widened (the `key_scope_sql` subquery): every row sharing a key with one of
the run's rows, so a new row colliding with an old one is caught.

Pure logic: the Delta history and the watermarks are read by profile_lake.spark.checks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from profile_lake.change_feed import Commit
from profile_lake.sql import sql_string

MARKER_NAME = "rows_this_run"
MARKER_PATTERN = re.compile(
    r"\brows_this_run\(\s*(?:'(?P<column>\w+)'\s*(?:,\s*'(?P<tenant_column>\w+)'\s*)?)?\)"
)
CHANGES_MARKER_NAME = "changes_this_run"
CHANGES_MARKER_PATTERN = re.compile(r"\bchanges_this_run\(\s*\)")
DEFAULT_COLUMN = "ingest_batch_id"
DEFAULT_TENANT_COLUMN = "tenant_id"
# dbt commands whose tests follow the models they check in the same invocation
SCOPED_COMMANDS = frozenset({"build"})
# Delta operations that write a table anew: everything in it was written by the run
CREATING_OPERATIONS = ("CREATE", "REPLACE")
UNKNOWN_TENANT_WATERMARK = -1
# the predicates of a scope that checks every row of a table, or none
EVERY_ROW = "true"
NO_ROW = "false"
WHOLE_OR_NOTHING = frozenset({EVERY_ROW, NO_ROW})


class ChecksScopeError(ValueError):
    """A `where` config names rows_this_run in a form this module cannot read."""


@dataclass(frozen=True)
class RowsThisRun:
    """A rows_this_run() call: the column holding each row's ingest batch, and the tenant column."""

    column: str
    tenant_column: str


@dataclass(frozen=True)
class ChangesThisRun:
    """A changes_this_run() call: the rows the run inserted or updated, from the table's feed."""


Marker = RowsThisRun | ChangesThisRun


@dataclass(frozen=True)
class RunRows:
    """The rows a scoped test reads: those of `source` (the table, or a session view of the
    run's changes to it) matching `predicate`."""

    source: str
    predicate: str
    # why every row is checked where the run's changes were asked for ("" otherwise)
    fallback_reason: str = ""


@dataclass(frozen=True)
class Scope:
    """What a test of one table checks: every row, no row, or what versions `before_version`
    (the last one committed before the run) + 1 to `last_version` wrote."""

    kind: str  # "all", "none" or "since"
    before_version: int | None = None
    last_version: int | None = None


CHECK_ALL = Scope("all")
CHECK_NONE = Scope("none")


def find_marker(where: str | None) -> Marker | None:
    """The rows_this_run() or changes_this_run() call in a test's `where` config, if any."""
    text = where or ""
    changes = CHANGES_MARKER_PATTERN.search(text)
    if changes is None and re.search(rf"\b{CHANGES_MARKER_NAME}\b", text):
        raise ChecksScopeError(
            f"where: {text!r}: write changes_this_run(), with no arguments (docs/checks.md)"
        )
    match = MARKER_PATTERN.search(text)
    if changes is not None:
        if match is not None or re.search(rf"\b{MARKER_NAME}\b", text):
            raise ChecksScopeError(
                f"where: {text!r}: use rows_this_run(...) or changes_this_run(), not both"
            )
        return ChangesThisRun()
    if match is None:
        if re.search(rf"\b{MARKER_NAME}\b", text):
            raise ChecksScopeError(
                f"where: {text!r}: write rows_this_run() or rows_this_run('<batch column>') or "
                "rows_this_run('<batch column>', '<tenant column>'), column names in single "
                "quotes and nothing else (docs/checks.md)"
            )
        return None
    return RowsThisRun(
        match["column"] or DEFAULT_COLUMN, match["tenant_column"] or DEFAULT_TENANT_COLUMN
    )


def replace_marker(where: str, predicate: str) -> str:
    """`where` with its rows_this_run() or changes_this_run() replaced by `predicate` (other
    conditions kept)."""
    replaced = MARKER_PATTERN.sub(lambda _: f"({predicate})", where, count=1)
    return CHANGES_MARKER_PATTERN.sub(lambda _: f"({predicate})", replaced, count=1)


def checks_only_written_rows(command: str | None, full_refresh: bool, full_checks: object) -> bool:
    """Whether tests check only what the run wrote: incremental `dbt build`s without the var
    `full_checks`."""
    return (command or "") in SCOPED_COMMANDS and not full_refresh and not is_true(full_checks)


def is_true(value: object) -> bool:
    """A dbt var given as a bool or as text (`--vars 'full_checks: true'`)."""
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return bool(value)


def history_reaches_back(timestamps: Sequence[datetime], limit: int, since: datetime) -> bool:
    """Whether the newest `limit` entries of a history (their `timestamps`) hold every commit
    since `since`: fewer than the limit came back, or one of them is older."""
    return len(timestamps) < limit or any(moment < since for moment in timestamps)


def scope_from_history(history: Iterable[Commit], run_started_at: datetime) -> Scope:
    """The scope of the tests of a table, from its history and the run's start."""
    written = sorted(
        (commit for commit in history if commit.timestamp >= run_started_at),
        key=lambda commit: commit.version,
    )
    if not written:
        return CHECK_NONE
    if written[0].version == 0 or any(
        word in commit.operation.upper() for commit in written for word in CREATING_OPERATIONS
    ):
        return CHECK_ALL
    return Scope("since", written[0].version - 1, written[-1].version)


def written_rows_sql(marker: RowsThisRun, scope: Scope, watermarks: Mapping[str, int]) -> str:
    """The predicate of the rows a scope checks; `watermarks`: newest batch per tenant ('' for
    rows without a tenant) before the run, for a `since` scope."""
    if scope.kind == "all":
        return EVERY_ROW
    if scope.kind == "none":
        return NO_ROW
    tenant = f"coalesce(cast({marker.tenant_column} as string), '')"
    if watermarks:
        ordered = sorted(watermarks.items())
        cases = " ".join(f"when {sql_string(name)} then {int(batch)}" for name, batch in ordered)
        watermark = f"case {tenant} {cases} else {UNKNOWN_TENANT_WATERMARK} end"
    else:
        watermark = str(UNKNOWN_TENANT_WATERMARK)
    return f"{marker.column} is null or {marker.column} > {watermark}"


def whole_table_rows(relation: str, scope: Scope, fallback_reason: str = "") -> RunRows:
    """The rows of `relation` an `all` or `none` scope checks."""
    return RunRows(relation, NO_ROW if scope.kind == "none" else EVERY_ROW, fallback_reason)


def changes_view_name(relation: str) -> str:
    """The session view of the rows the run wrote to `relation`, read from its change feed."""
    return "checks__" + re.sub(r"\W+", "_", relation).strip("_") + "__changes"


def key_scope_sql(relation: str, where: str, run_rows: RunRows, key_columns: Sequence[str]) -> str:
    """A subquery of the rows of `relation` (those matching `where`, its marker read as true)
    sharing their key with a row the run wrote (`run_rows`): a uniqueness test over it sees a
    new row and the old rows it collides with. When the run's rows are every row of the table
    or none, that is the table's rows or none: one scan, without the join."""
    if not key_columns:
        raise ChecksScopeError("a scoped uniqueness test needs its key columns")
    if run_rows.source == relation and run_rows.predicate in WHOLE_OR_NOTHING:
        return scoped_sql(where, run_rows)
    keys = ", ".join(key_columns)
    matches = " and ".join(f"all_rows.{column} <=> run_keys.{column}" for column in key_columns)
    written = replace_marker(where, run_rows.predicate)
    return (
        f"(select /*+ broadcast(run_keys) */ all_rows.* "
        f"from (select * from {relation} as table_rows where {replace_marker(where, 'true')}) "
        f"as all_rows left semi join "
        f"(select distinct {keys} from {run_rows.source} as table_rows where {written}) "
        f"as run_keys on {matches}) dbt_subquery"
    )


def scoped_sql(where: str, run_rows: RunRows) -> str:
    """dbt's filtered subquery over the run's rows, the marker replaced by their predicate. The
    source is aliased: Spark would read `t where (...)` as the alias `where` with column names."""
    rows = replace_marker(where, run_rows.predicate)
    return f"(select * from {run_rows.source} as table_rows where {rows}) dbt_subquery"


def parse_timestamp(text: str) -> datetime:
    """dbt's run_started_at as text (aware, or naive UTC)."""
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
