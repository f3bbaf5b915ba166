"""dbt's adapter test suite (dbt-tests-adapter) against the project's own `local` target."""

from __future__ import annotations

from typing import Any

import pytest

from profile_lake.testing.profile import profile_target


@pytest.fixture(scope="class")
def dbt_profile_target() -> dict[str, Any]:
    """The committed `local` output, rendered: Delta, the test lake (PROFILE_LAKE_HOME, set by
    pytests/conftest.py), the same Spark settings. dbt's `dbt_profile_data` fixture replaces its
    `schema` with a unique one per test class, so the classes do not see each other's tables."""
    return profile_target("local")
