"""A lake of the test session built by in-process dbt runs, some scoped to tenants (var
tenants), and its tables read through Spark as multisets of rows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pytests.support.dbt_runner import run_dbt


@dataclass(frozen=True)
class Lake:
    """`build` runs `dbt build <selection>` on the schema, reading the landing folder."""

    schema: str
    landing: Path
    lake_home: Path
    selection: tuple[str, ...] = ()

    def env(self) -> dict[str, str]:
        return {"PROFILE_LAKE_SCHEMA": self.schema, "PROFILE_LAKE_LANDING": str(self.landing)}

    def target_path(self) -> Path:
        return self.lake_home / "target" / self.schema

    def build(self, tenants: list[str] | None = None, selection: list[str] | None = None) -> None:
        """`dbt build` of the lake's selection (or of `selection`: every argument after
        `build`), for `tenants` only if given."""
        args = ["build", *(self.selection if selection is None else selection)]
        if tenants is not None:
            args += ["--vars", "{tenants: [" + ", ".join(tenants) + "]}"]
        run_dbt(args, env=self.env(), target_path=self.target_path())


def table_rows(rows: Callable[[str], list[dict]], table: str, columns: list[str]) -> Counter:
    """The rows of `table`, as tuples of `columns` (a list value as a tuple), counted."""

    def frozen(value: object) -> object:
        return tuple(value) if isinstance(value, list) else value

    return Counter(
        tuple(frozen(row[column]) for column in columns)
        for row in rows(f"select {', '.join(columns)} from {table}")
    )


def latest_version(spark, table: str) -> int:
    """The newest version in a Delta table's history."""
    return spark.sql(f"describe history {table} limit 1").first()["version"]
