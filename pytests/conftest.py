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

from pytests.support.jvm import TEST_JVM_OPTIONS
from pytests.support.scheduling import group_and_order

LAKE_HOME = Path(tempfile.mkdtemp(prefix="profile-lake-tests-"))
os.environ["PROFILE_LAKE_HOME"] = str(LAKE_HOME)
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
# The tests' queries read a few rows: compiling each to Java costs more CPU than it saves
# (a quarter of a data test's); Spark interprets them instead (profiles/profiles.yml).
os.environ.setdefault("PROFILE_LAKE_CODEGEN", "false")
# C1 only and the serial collector (pytests/support/jvm.py says why).
os.environ.setdefault("PROFILE_LAKE_JVM_OPTIONS", TEST_JVM_OPTIONS)

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

    from pytests.support.dbt_runner import run_dbt

    run_dbt(["debug"])
    yield SparkSession.builder.getOrCreate()


@pytest.fixture(scope="class")
def dbt_profile_target() -> dict[str, Any]:
    """The committed `local` output, rendered, for dbt's `project` fixture: Delta, the test lake
    (PROFILE_LAKE_HOME, set above), the same Spark settings, the session's one SparkSession.
    dbt's `dbt_profile_data` fixture replaces its `schema` with a unique one per test class, so
    the classes do not see each other's tables."""
    from profile_lake.spark.session import profile_target

    return profile_target("local")


# ---------- sharing the modules between pytest-xdist's workers (`make test` runs two)

# Modules in each folder read one session-wide lake of the folder's (the sample; the two-wave
# scoped lake; the small lake; the identity lake): one worker runs them all, so the lake is built
# once per test session rather than once per worker.
SHARED_LAKE_FOLDERS = (
    "pytests/integration/sample_lake/",
    "pytests/integration/reference_lake/",
    "pytests/integration/small_lake/",
    "pytests/integration/identity_lake/",
)
# Pure logic, no Spark: these run last and fill the end of the run.
PURE_LOGIC_FOLDERS = ("pytests/unit/",)
# The longest groups, longest first (`make test`'s --durations, summed per module), handed
# out before the rest: a long module handed out late would end the run alone on one worker.
LONGEST_GROUPS = (
    "pytests/integration/reference_lake/",
    "pytests/integration/identity_lake/",
    "pytests/integration/test_watch.py",
    "pytests/integration/test_erasure_applications.py",
    "pytests/integration/test_incremental_marts.py",
    "pytests/integration/test_tenant_lock.py",
    "pytests/integration/test_tenant_scoped_runs.py",
    "pytests/integration/small_lake/",
)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups' marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each module an xdist group, a shared-lake folder one group, the longest group first,
    then Spark, then pure logic (pytests/support/scheduling.py)."""
    group_and_order(config, items, SHARED_LAKE_FOLDERS, PURE_LOGIC_FOLDERS, LONGEST_GROUPS)
