"""Tests in dbt-spark's functional style (dbt's `project` fixture: a small project run by dbt
in-process, on the test session's one SparkSession): the project's configuration and macros,
and its tables."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from profile_lake.project import PROJECT_DIR, project_var

# the Delta MERGE macros, the strategy switch that reaches them, and the mart technique they ask
# (a model outside the mart idiom takes `keys`); not the materialization, which needs the
# project's locks
MERGE_MACRO_FILES: list[Path] = [
    *sorted((PROJECT_DIR / "macros" / "delta").glob("*.sql")),
    *sorted((PROJECT_DIR / "macros" / "dbt_spark_overrides").glob("dbt_spark_*.sql")),
    PROJECT_DIR / "macros" / "marts" / "mart_recomputed_whole.sql",
    PROJECT_DIR / "macros" / "marts" / "mart_tenants_recomputed.sql",
    PROJECT_DIR / "macros" / "marts" / "mart_technique.sql",
]


def delta_project(name: str, models: dict[str, Any] | None = None) -> dict[str, Any]:
    """A test project configured like ours: Delta for models, seeds and snapshots, and the
    project's var tenant_id_pattern (the materialization's tenant scope checks var tenants
    against it)."""
    return {
        "name": name,
        "vars": {"tenant_id_pattern": project_var("tenant_id_pattern")},
        "models": {"+file_format": "delta", **(models or {})},
        "seeds": {"+file_format": "delta"},
        "snapshots": {"+file_format": "delta"},
    }


def repository_macros(paths: Iterable[Path]) -> dict[str, str]:
    """Macro files of the repository, as they are (the tests exercise the real macros), in the
    form of dbt's `macros` fixture: file name -> text."""
    files = list(paths)
    names = [path.name for path in files]
    assert files, "no macro files"
    assert len(set(names)) == len(names), f"macro file names repeat: {sorted(names)}"
    return {path.name: path.read_text() for path in files}


def spark() -> SparkSession:
    """The process's SparkSession, the one dbt's session connection runs its SQL on."""
    return SparkSession.builder.getOrCreate()


def table_name(project: Any, name: str) -> str:
    """The qualified name of a test project's table (dbt gives each test class its schema)."""
    from dbt.tests.util import relation_from_name

    return str(relation_from_name(project.adapter, name))
