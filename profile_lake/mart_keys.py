"""The keys an incremental mart recomputes in a run, as SQL its sources can skip files by.

A mart's run evaluates its keys to recompute once (a tenant and a profile, a tenant and an
identity). A few keys are then written into the mart's SQL as literals: each source read is
filtered by a disjunction of equalities, grouped by the leading key column:

    (tenant_id = 't1' and (profile_id = 'p1' or profile_id = 'p2')) or (tenant_id = 't2' and ...)

Delta skips a file when its min/max statistics exclude every branch, so on a table clustered by
the key a few keys read a few files. An ``in`` list would not do: Delta's data skipping turns
``x in (a, b, c)`` into the single range ``min(a, b, c) <= x <= max(a, b, c)``, which scattered
keys span whole. Many keys are kept in a cached session view instead, and the sources are
semi-joined with it: a predicate of thousands of branches costs more than it skips.

Pure logic: :mod:`dbt.adapters.profile_lake_spark.impl` evaluates the keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from profile_lake.mart_feeds import session_view_name
from profile_lake.sql import sql_string

# keys up to this many are written as literals (dbt var `mart_literal_key_limit`): each query
# reading a few hundred literals pays about a second of planning and of code generation that
# fails past 64 KB and falls back, which only a large table's skipped files repay
DEFAULT_LITERAL_KEY_LIMIT = 200
# equalities checked one after the other at a leaf of a key's search tree
LEAF_KEYS = 8


@dataclass(frozen=True)
class RecomputeKeys:
    """A run's keys to recompute, one of three kinds:

    - ``all``: a full build, every key (a source read takes no filter);
    - ``literal``: few keys, as `rows`;
    - ``relation``: many keys, in the cached session view `relation`; or, where they are not
      evaluated beforehand (a dbt unit test, whose fixtures are no tables), their own `sql`.
    """

    kind: str
    columns: tuple[str, ...]
    sql: str
    rows: tuple[tuple[Key, ...], ...] = ()
    relation: str | None = None

    def as_dict(self) -> dict[str, object]:
        """For the macros, with `body`: the body of a CTE of the keys."""
        return {
            "kind": self.kind,
            "columns": list(self.columns),
            "sql": self.sql,
            "rows": [list(row) for row in self.rows],
            "relation": self.relation,
            "body": self.body_sql(),
        }

    @classmethod
    def from_dict(cls, keys: Mapping[str, Any]) -> RecomputeKeys:
        return cls(
            kind=str(keys["kind"]),
            columns=tuple(keys["columns"]),
            sql=str(keys["sql"]),
            rows=tuple(tuple(row) for row in keys.get("rows") or ()),
            relation=keys.get("relation"),
        )

    def body_sql(self) -> str:
        """The body of a CTE of the keys: their own SQL where it is not evaluated beforehand,
        else a select of the evaluated keys."""
        if self.kind == "all" or (self.kind == "relation" and self.relation is None):
            return self.sql
        source = self.relation if self.kind == "relation" else values_sql(self.columns, self.rows)
        return f"select {', '.join(self.columns)} from {source}"


def keys_view_name(target: str, name: str) -> str:
    """The session view caching the mart `target`'s key set `name`."""
    return session_view_name("keys", target, name)


Key = str | int


def sql_literal(value: Key) -> str:
    """A key value as a SQL literal: a number as it is, text quoted."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return sql_string(str(value))


def key_rows(
    rows: Iterable[Sequence[object]], columns: Sequence[str]
) -> tuple[tuple[Key, ...], ...]:
    """Distinct key rows, sorted; a key with a null part matches no row and is left out."""
    kept: set[tuple[Key, ...]] = set()
    for row in rows:
        if len(row) != len(columns):
            raise ValueError(
                f"a key row has {len(row)} values for the columns {', '.join(columns)}"
            )
        if any(value is None for value in row):
            continue
        kept.add(tuple(value if isinstance(value, int) else str(value) for value in row))
    return tuple(sorted(kept))


def values_sql(columns: Sequence[str], rows: Sequence[Sequence[Key]]) -> str:
    """The key rows as a relation (no row: an empty one of string columns)."""
    if not rows:
        nulls = ", ".join(f"cast(null as string) as {column}" for column in columns)
        return f"(select {nulls} where false)"
    values = ",\n        ".join(
        "(" + ", ".join(sql_literal(value) for value in row) + ")" for row in rows
    )
    return f"(select * from values\n        {values}\n    as keys ({', '.join(columns)}))"


def literal_predicate(columns: Sequence[str], rows: Sequence[Sequence[Key]]) -> str:
    """A predicate true for exactly the key rows over `columns` (the source's own names for the
    key's columns, in the key's order): equalities only, never an `in` list."""
    if not rows:
        return "false"
    return _disjunction(list(columns), [tuple(row) for row in rows])


def _disjunction(columns: list[str], rows: list[tuple[Key, ...]]) -> str:
    column, rest = columns[0], columns[1:]
    if not rest:
        return _search_tree(column, sorted({row[0] for row in rows}))
    branches = []
    for value, group in groupby(sorted(rows), key=lambda row: row[0]):
        inner = _disjunction(rest, [row[1:] for row in group])
        branches.append(f"({column} = {sql_literal(value)} and {inner})")
    return _or(branches)


def _search_tree(column: str, values: list[Key]) -> str:
    """Equalities on `column` arranged as a binary search tree of ranges: a row is checked
    against a few bounds and at most LEAF_KEYS values, not against every key (Spark evaluates
    `a and b` and `a or b` left to right and stops early), and a file's min/max statistics are
    excluded by the same tree, so Delta skips exactly the files a flat chain of equalities
    would let it skip."""
    if len(values) <= LEAF_KEYS:
        return _or([f"{column} = {sql_literal(value)}" for value in values])
    middle = len(values) // 2
    pivot = sql_literal(values[middle])
    lower = _search_tree(column, values[:middle])
    upper = _search_tree(column, values[middle:])
    return f"(({column} < {pivot} and {lower}) or ({column} >= {pivot} and {upper}))"


def _or(terms: list[str]) -> str:
    return terms[0] if len(terms) == 1 else "(" + " or ".join(terms) + ")"


def semi_join_predicate(columns: Sequence[str], key_columns: Sequence[str], relation: str) -> str:
    """The predicate of the many-keys case: the source's key columns in the keys' relation."""
    selected = ", ".join(key_columns)
    if len(columns) == 1:
        return f"{columns[0]} in (select {selected} from {relation})"
    return f"({', '.join(columns)}) in (select {selected} from {relation})"


def key_predicate(columns: Sequence[str], keys: RecomputeKeys) -> str:
    """The filter a source read takes to reach the keys: none on a full build, literals when
    few, else a semi-join with the cached keys (or with their SQL, not evaluated beforehand)."""
    if len(columns) != len(keys.columns):
        raise ValueError(
            f"the keys have the columns {', '.join(keys.columns)}; "
            f"the filter names {', '.join(columns)}"
        )
    if keys.kind == "all":
        return "true"
    if keys.kind == "literal":
        return literal_predicate(columns, keys.rows)
    return semi_join_predicate(columns, keys.columns, keys.relation or f"({keys.sql})")


def recompute_keys_kind(incremental: bool, evaluate: bool) -> str:
    """How a run treats a mart's keys: `all` on a full build; evaluated beforehand on an
    incremental run (`literal` or `relation`); `relation` to its own CTE where they cannot be
    evaluated beforehand (a unit test, or dbt parsing)."""
    if not incremental:
        return "all"
    return "evaluate" if evaluate else "relation"


def evaluated_keys(
    columns: Sequence[str], rows: Sequence[Sequence[object]], limit: int, view: str, sql: str
) -> RecomputeKeys:
    """The keys of a run from the first `limit + 1` rows of their query: literals when at most
    `limit`, else the view the caller caches them in."""
    if len(rows) <= limit:
        return RecomputeKeys("literal", tuple(columns), sql, key_rows(rows, columns))
    return RecomputeKeys("relation", tuple(columns), sql, relation=view)


def merge_target_predicate(keys: RecomputeKeys, unique_key: Sequence[str]) -> str | None:
    """A MERGE's condition on its target for a run whose rows are all of these keys: the
    literal keys over the target's columns, so that Delta reads only the target's files that
    may hold them (None when the keys are not literals, or not columns of the unique key)."""
    if keys.kind != "literal" or not set(keys.columns) <= set(unique_key):
        return None
    return key_predicate([f"DBT_INTERNAL_DEST.{column}" for column in keys.columns], keys)
