"""dbt's own adapter test cases (dbt-tests-adapter) on the `local` target: Delta on local Spark.

dbt-spark runs these on its thrift and Databricks profiles and skips the snapshot and Python
model cases on its `spark_session` profile (no Delta jars there, no Python submission). Ours has
both, so they run here. Fixture overrides follow dbt-spark's tests/functional/adapter
(test_basic.py, test_python_model.py): Delta as the file format, as dbt_project.yml sets it.
"""

from __future__ import annotations

from typing import Any

import pytest
from dbt.tests.adapter.basic.test_adapter_methods import BaseAdapterMethod
from dbt.tests.adapter.basic.test_base import BaseSimpleMaterializations
from dbt.tests.adapter.basic.test_empty import BaseEmpty
from dbt.tests.adapter.basic.test_ephemeral import BaseEphemeral
from dbt.tests.adapter.basic.test_generic_tests import BaseGenericTests
from dbt.tests.adapter.basic.test_incremental import BaseIncremental
from dbt.tests.adapter.basic.test_singular_tests import BaseSingularTests
from dbt.tests.adapter.basic.test_snapshot_check_cols import BaseSnapshotCheckCols
from dbt.tests.adapter.basic.test_snapshot_timestamp import BaseSnapshotTimestamp
from dbt.tests.adapter.basic.test_validate_connection import BaseValidateConnection
from dbt.tests.adapter.python_model.test_python_model import (
    BasePythonIncrementalTests,
    BasePythonModelTests,
)
from dbt.tests.util import relation_from_name, run_dbt

from pytests.support.dbt_functional import delta_project

pytestmark = [
    pytest.mark.integration,
    # dbt-tests-adapter's base classes declare class-scoped fixtures as instance methods, which
    # pytest 9 deprecates (one warning per fixture); ours are classmethods, as pytest asks.
    pytest.mark.filterwarnings(
        "ignore:Class-scoped fixtures defined as instance methods:pytest.PytestRemovedIn10Warning"
    ),
]


class TestSimpleMaterializations(BaseSimpleMaterializations):
    @pytest.fixture(scope="class")
    @classmethod
    def project_config_update(cls) -> dict[str, Any]:
        return delta_project("base")


class TestSingularTests(BaseSingularTests):
    pass


class TestEmpty(BaseEmpty):
    pass


class TestEphemeral(BaseEphemeral):
    @pytest.fixture(scope="class")
    @classmethod
    def project_config_update(cls) -> dict[str, Any]:
        return delta_project("ephemeral")


class TestIncremental(BaseIncremental):
    @pytest.fixture(scope="class")
    @classmethod
    def project_config_update(cls) -> dict[str, Any]:
        return delta_project("incremental")


class TestGenericTests(BaseGenericTests):
    @pytest.fixture(scope="class")
    @classmethod
    def project_config_update(cls) -> dict[str, Any]:
        return delta_project("generic_tests")


class TestSnapshotCheckCols(BaseSnapshotCheckCols):
    @pytest.fixture(scope="class")
    @classmethod
    def project_config_update(cls) -> dict[str, Any]:
        return delta_project("snapshot_strategy_check_cols")


class TestSnapshotTimestamp(BaseSnapshotTimestamp):
    @pytest.fixture(scope="class")
    @classmethod
    def project_config_update(cls) -> dict[str, Any]:
        return delta_project("snapshot_strategy_timestamp")


class TestAdapterMethod(BaseAdapterMethod):
    pass


class TestValidateConnection(BaseValidateConnection):
    pass


class TestPythonModel(BasePythonModelTests):
    @pytest.fixture(scope="class")
    @classmethod
    def project_config_update(cls) -> dict[str, Any]:
        return delta_project("test")


class TestPythonIncremental(BasePythonIncrementalTests):
    @pytest.fixture(scope="class")
    @classmethod
    def project_config_update(cls) -> dict[str, Any]:
        return delta_project("test", models={"+incremental_strategy": "merge"})


# Not a dbt case: the adapter fix that TestPythonModel exposed (its seed has a quoted value),
# checked on the values themselves. See adapter/dbt/adapters/profile_lake_spark/session.py.
seed_literals_csv = """id,label,note,amount
1,O'Brien,back\\slash,9007199254740993
2,,None,
"""


class TestSeedLiterals:
    @pytest.fixture(scope="class")
    @classmethod
    def project_config_update(cls) -> dict[str, Any]:
        return delta_project("seed_literals")

    @pytest.fixture(scope="class")
    @classmethod
    def seeds(cls) -> dict[str, str]:
        return {"literals.csv": seed_literals_csv}

    def test_seed_values_are_loaded_as_written(self, project: Any) -> None:
        run_dbt(["seed"])
        relation = relation_from_name(project.adapter, "literals")
        rows = project.run_sql(
            f"select id, label, note, amount from {relation} order by id", fetch="all"
        )
        assert [tuple(row) for row in rows] == [
            (1, "O'Brien", "back\\slash", 9007199254740993),  # quote, backslash, > 2**53
            (2, None, "None", None),  # empty cells are NULL; the word None stays a string
        ]
