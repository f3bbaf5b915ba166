"""One lake and one SparkSession for the whole test session (per worker: `make test` runs two).

dbt-spark's session method creates the SparkSession once per process, with the warehouse and
metastore fixed at that moment; so the session's PROFILE_LAKE_HOME is set here, before any dbt
invocation, and every test uses its own schema (PROFILE_LAKE_SCHEMA) inside that one lake.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

LAKE_HOME = Path(tempfile.mkdtemp(prefix="profile-lake-tests-"))
os.environ["PROFILE_LAKE_HOME"] = str(LAKE_HOME)
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")

# dbt's fixtures plugin: dbt's adapter test suite (pytests/adapter) and the functional-style
# tests of our macros (pytests/integration) run small dbt projects with it.
pytest_plugins = ["dbt.tests.fixtures.project"]


@pytest.fixture(scope="session")
def lake_home() -> Path:
    return LAKE_HOME


@pytest.fixture(scope="session")
def spark(lake_home: Path) -> Iterator[object]:
    """The session dbt uses: opened through `dbt debug`, so it has exactly the profile's
    settings (Delta, warehouse and metastore under the test lake)."""
    from pyspark.sql import SparkSession

    from profile_lake.testing.dbt_runner import run_dbt

    run_dbt(["debug"])
    yield SparkSession.builder.getOrCreate()


@pytest.fixture(scope="class")
def dbt_profile_target() -> dict[str, Any]:
    """The committed `local` output, rendered, for dbt's `project` fixture: Delta, the test lake
    (PROFILE_LAKE_HOME, set above), the same Spark settings, the session's one SparkSession.
    dbt's `dbt_profile_data` fixture replaces its `schema` with a unique one per test class, so
    the classes do not see each other's tables."""
    from profile_lake.testing.profile import profile_target

    return profile_target("local")
