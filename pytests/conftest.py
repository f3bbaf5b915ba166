"""One lake and one SparkSession for the whole test session.

dbt-spark's session method creates the SparkSession once per process, with the warehouse and
metastore fixed at that moment; so the session's PROFILE_LAKE_HOME is set here, before any dbt
invocation, and every test uses its own schema (PROFILE_LAKE_SCHEMA) inside that one lake.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

LAKE_HOME = Path(tempfile.mkdtemp(prefix="profile-lake-tests-"))
os.environ["PROFILE_LAKE_HOME"] = str(LAKE_HOME)
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")

# dbt's own adapter test suite (pytests/adapter) uses its fixtures plugin.
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
