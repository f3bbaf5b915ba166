"""The generic test table_checks (tests/generic/table_checks.sql) on real Delta tables, in
dbt-spark's functional-test style: a seed breaking each kind of check once, and one check the
`row_condition` of which spares a row, fails as one test whose rows name each broken check in
`failed_check`, with the row (or the duplicated key) in `failing_values`; a table breaking none
passes. Scoping (`where: rows_this_run()`) is test_checks_scope.py's."""

from __future__ import annotations

import json
from typing import Any

import pytest
from dbt.tests.util import run_dbt

from profile_lake.project import PROJECT_DIR
from pytests.support.dbt_functional import spark

pytestmark = pytest.mark.integration

MACRO_FILES = [
    PROJECT_DIR / "macros" / "checks" / "profile_lake_spark__get_where_subquery.sql",
    PROJECT_DIR / "macros" / "checks" / "rows_to_check.sql",
    PROJECT_DIR / "macros" / "validation" / "sql_string_literal.sql",
]
GENERIC_TEST = PROJECT_DIR / "tests" / "generic" / "table_checks.sql"

# id 3 twice (one of them pointing at no parent), a null parent with a kind not accepted, a
# negative amount; rows 5 and 7 break the kind and the amount where flag is false, which the
# checks' row_condition leaves out
CHILDREN_CSV = """id,parent_id,kind,amount,flag
1,a,x,5,true
2,b,y,5,true
3,c,x,5,true
3,a,x,5,true
4,,z,5,true
5,a,z,5,false
6,a,x,-1,true
7,a,x,-1,false
"""
PARENTS_CSV = """id
a
b
"""
SEEDS_YML = """
version: 2
seeds:
  - name: children
    data_tests:
      - table_checks:
          name: table_checks_children
          arguments:
            unique:
              - [id]
            not_null: [id, parent_id]
            expressions:
              - expression: "amount >= 0"
                row_condition: flag
            accepted_values:
              - {column: kind, values: [x, y], row_condition: flag}
            relationships:
              - {column: parent_id, to: ref('parents'), field: id}
  - name: parents
    data_tests:
      - table_checks:
          name: table_checks_parents
          arguments:
            unique:
              - [id]
            not_null: [id]
"""


def failing_rows(results: Any, name: str) -> list[tuple[str, dict]]:
    """The rows test `name` returned (its compiled query run again), as many as dbt counted."""
    (result,) = [item for item in results if item.node.name == name]
    rows = spark().sql(result.node.compiled_code).collect()
    assert len(rows) == (result.failures or 0), result.message
    return sorted((row["failed_check"], json.loads(row["failing_values"])) for row in rows)


class TestTableChecks:
    @pytest.fixture(scope="class")
    @classmethod
    def seeds(cls) -> dict[str, str]:
        return {"children.csv": CHILDREN_CSV, "parents.csv": PARENTS_CSV, "_seeds.yml": SEEDS_YML}

    @pytest.fixture(scope="class")
    @classmethod
    def tests(cls) -> dict[str, Any]:
        return {"generic": {"table_checks.sql": GENERIC_TEST.read_text()}}

    def test_each_broken_check_is_a_row_naming_it(self, project: Any) -> None:
        run_dbt(["seed"])
        results = run_dbt(["test"], expect_pass=False)
        statuses = {item.node.name: str(item.status) for item in results}
        assert statuses == {"table_checks_children": "fail", "table_checks_parents": "pass"}
        failed = failing_rows(results, "table_checks_children")
        assert [check for check, _ in failed] == [
            "accepted_values: kind",
            "expression: amount >= 0",
            "not_null: parent_id",
            "relationships: parent_id to parents.id",
            "unique: id",
        ]
        values = dict(failed)
        assert values["unique: id"] == {"id": 3, "occurrences": 2}
        assert values["relationships: parent_id to parents.id"]["parent_id"] == "c"
        assert values["not_null: parent_id"]["id"] == 4
        assert values["accepted_values: kind"]["id"] == 4
        assert values["expression: amount >= 0"]["id"] == 6
