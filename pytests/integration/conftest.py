"""Integration fixtures: the project built on landing data by real dbt, Spark and Delta."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytests.support.dbt_functional import delta_project, repository_macros
from pytests.support.dbt_runner import PROJECT_DIR, DbtRun, run_dbt
from pytests.support.postgres import ThrowawayPostgres

SAMPLE_LANDING = PROJECT_DIR / "sample" / "landing"
SAMPLE_MANIFEST = PROJECT_DIR / "sample" / "manifest.json"


@dataclass(frozen=True)
class BuiltLake:
    """A schema of the test lake built by `dbt build` from a landing folder."""

    schema: str
    landing: Path
    lake_home: Path
    build: DbtRun
    run_history: bool = False
    project_dir: Path = PROJECT_DIR

    def table(self, name: str, layer: str = "") -> str:
        return f"{self.schema}{'_' + layer if layer else ''}.{name}"

    def table_path(self, name: str, layer: str = "") -> Path:
        schema = f"{self.schema}{'_' + layer if layer else ''}"
        return self.lake_home / "warehouse" / f"{schema}.db" / name

    def env(self) -> dict[str, str]:
        return {"PROFILE_LAKE_SCHEMA": self.schema, "PROFILE_LAKE_LANDING": str(self.landing)}

    def dbt(self, args: list[str], expect_pass: bool = True, unit_tests: bool = False) -> DbtRun:
        return run_dbt(
            args,
            expect_pass=expect_pass,
            env=self.env(),
            target_path=self.lake_home / "target" / self.schema,
            unit_tests=unit_tests,
            run_history=self.run_history,
            project_dir=self.project_dir,
        )


def build_lake(
    lake_home: Path,
    schema: str,
    landing: Path,
    unit_tests: bool = False,
    run_history: bool = False,
    project_dir: Path = PROJECT_DIR,
    build_args: tuple[str, ...] | list[str] = ("build",),
) -> BuiltLake:
    """`dbt build` of `landing` into `schema`; `build_args` may select less (for a lake whose
    later whole build runs the rest, and the data tests on every row). `project_dir`: the
    project, or a copy of it with seeds of the test's own (pytests/support/project_copy.py)."""
    env = {"PROFILE_LAKE_SCHEMA": schema, "PROFILE_LAKE_LANDING": str(landing)}
    build = run_dbt(
        list(build_args),
        env=env,
        target_path=lake_home / "target" / schema,
        unit_tests=unit_tests,
        run_history=run_history,
        project_dir=project_dir,
    )
    return BuiltLake(schema, landing, lake_home, build, run_history, project_dir)


@pytest.fixture(scope="session")
def lake_builder() -> Callable[[Path, str, Path], BuiltLake]:
    """build_lake, for test modules (pytests/ has no packages, so they cannot import it)."""
    return build_lake


@pytest.fixture(scope="session")
def sample_manifest() -> dict:
    return json.loads(SAMPLE_MANIFEST.read_text())


@pytest.fixture(scope="session")
def sample_lake(spark, lake_home: Path) -> BuiltLake:
    """The bundled sample, built once for the session (schema `sample`) by a whole `dbt build`
    (dbt's unit tests run in the small lake's first build)."""
    # the sample lake keeps its run history: test_observability reads it
    return build_lake(lake_home, "sample", SAMPLE_LANDING, run_history=True)


@pytest.fixture(scope="session")
def sample_docs(sample_lake: BuiltLake, lake_home: Path) -> Path:
    """`dbt docs generate` on the sample's schemas, once per session, into a target folder of
    its own: the folder of the docs site (index.html, manifest.json, catalog.json)."""
    target = lake_home / "target" / "docs"
    run_dbt(["docs", "generate"], env=sample_lake.env(), target_path=target)
    assert (target / "index.html").is_file()
    return target


@pytest.fixture(scope="session")
def rows(spark) -> Callable[[str], list[dict]]:
    def fetch(sql: str) -> list[dict]:
        return [row.asDict(recursive=True) for row in spark.sql(sql).collect()]

    return fetch


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[ThrowawayPostgres]:
    """A throwaway PostgreSQL server (installed with apt-get if missing), for the `shared`
    target's metastore; `new_database(name)` gives a test an empty metastore of its own."""
    server = ThrowawayPostgres()
    server.start()
    try:
        yield server
    finally:
        server.stop()


# ---------- dbt-spark's functional-test style (dbt's `project` fixture): a module using it
# names the repository's macro files it exercises in MACRO_FILES


@pytest.fixture(scope="class")
def macros(request: pytest.FixtureRequest) -> dict[str, str]:
    """The macro files the test module names in MACRO_FILES, as they are in the repository."""
    return repository_macros(request.module.MACRO_FILES)


@pytest.fixture(scope="class")
def project_config_update(request: pytest.FixtureRequest) -> dict[str, Any]:
    """A test project configured like ours (Delta everywhere), named after the test module."""
    return delta_project(request.module.__name__.rpartition(".")[2].removeprefix("test_"))
