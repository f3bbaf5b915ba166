"""Table layouts on real Delta tables, in dbt-spark's functional-test style: the adapter's
`liquid_clustered_by` config (CREATE ... CLUSTER BY), the `merge_with_deletes` strategy on a
liquid-clustered table with deletion vectors and the change data feed (the layout `records`
can take, var records_layout), the optimize_table run-operation on both layouts, and the
compile errors of impossible combinations.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from pytests.support.dbt_functional import spark, table_name
from pytests.support.dbt_runner import PROJECT_DIR

pytestmark = pytest.mark.integration

MACRO_FILES = [
    *sorted((PROJECT_DIR / "macros" / "delta").glob("*.sql")),
    # the strategy switch that reaches the MERGE macros
    *sorted((PROJECT_DIR / "macros" / "dbt_spark_overrides").glob("dbt_spark_*.sql")),
    PROJECT_DIR / "macros" / "maintenance" / "optimize_table.sql",
]


def detail(project: Any, name: str) -> dict[str, Any]:
    return spark().sql(f"describe detail {table_name(project, name)}").first().asDict()


def last_version(project: Any, name: str) -> dict[str, Any]:
    row = spark().sql(f"describe history {table_name(project, name)} limit 1").first()
    return {
        "version": row["version"],
        "operation": row["operation"],
        "parameters": dict(row["operationParameters"] or {}),
        "metrics": {key: int(value) for key, value in (row["operationMetrics"] or {}).items()},
    }


def batch(number: int) -> list[str]:
    return ["--vars", json.dumps({"batch": number})]


# Batch 2: acme 1 updated, acme 2 deleted, acme 3 inserted, globex 1 unchanged; initech absent.
changes_csv = """batch,tenant_id,id,name,is_deleted
1,acme,1,acme-1,false
1,acme,2,acme-2,false
1,globex,1,globex-1,false
1,initech,1,initech-1,false
2,acme,1,acme-1b,false
2,acme,2,acme-2,true
2,acme,3,acme-3,false
2,globex,1,globex-1,false
"""

expected_rows = [
    ("acme", 1, "acme-1b"),
    ("acme", 3, "acme-3"),
    ("globex", 1, "globex-1"),
    ("initech", 1, "initech-1"),
]

liquid_sql = """
{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key=['tenant_id', 'id'],
        liquid_clustered_by=['tenant_id', 'name'],
        tblproperties={
            'delta.enableChangeDataFeed': 'true',
            'delta.enableDeletionVectors': 'true',
        },
    )
}}

select
    tenant_id,
    id,
    name{% if is_incremental() %},
    is_deleted as _delete_row
    {%- endif %}

from {{ ref('changes') }}
where
    batch = {{ var('batch', 1) }}
    {% if not is_incremental() -%}
    and not is_deleted
    {%- endif %}
"""

partitioned_sql = """
{{
    config(
        materialized='table',
        partition_by=['tenant_id'],
        zorder_by=['name'],
    )
}}

select tenant_id, id, name from {{ ref('changes') }} where batch = 1
"""


class TestLiquidClustering:
    @pytest.fixture(scope="class")
    @classmethod
    def seeds(cls) -> dict[str, str]:
        return {"changes.csv": changes_csv}

    @pytest.fixture(scope="class")
    @classmethod
    def models(cls) -> dict[str, str]:
        return {"liquid.sql": liquid_sql, "partitioned.sql": partitioned_sql}

    def test_clustered_merge_with_deletion_vectors_and_change_feed(self, project: Any) -> None:
        run_dbt(["seed"])
        run_dbt(["run", *batch(1)])
        created = detail(project, "liquid")
        assert created["clusteringColumns"] == ["tenant_id", "name"]
        assert created["partitionColumns"] == []
        assert "deletionVectors" in created["tableFeatures"]
        # one file holding every row, so that the MERGE below changes part of a file
        run_dbt(["run-operation", "optimize_table", "--args", "{model_name: liquid}"])
        assert detail(project, "liquid")["numFiles"] == 1

        run_dbt(["run", *batch(2)])
        rows = spark().table(table_name(project, "liquid")).collect()
        assert sorted(tuple(row) for row in rows) == expected_rows
        merge = last_version(project, "liquid")
        assert merge["operation"] == "MERGE"
        metrics = merge["metrics"]
        assert (
            metrics["numTargetRowsUpdated"],
            metrics["numTargetRowsDeleted"],
            metrics["numTargetRowsInserted"],
        ) == (1, 1, 1), metrics
        # the delete and the update marked their rows in a deletion vector: the file's other
        # rows were not copied
        assert metrics["numTargetDeletionVectorsAdded"] == 1, metrics
        assert metrics["numTargetRowsCopied"] == 0, metrics
        # the tenants of the source as literals (file skipping on the clustering column)
        assert "tenant_id#" in merge["parameters"]["predicate"]
        assert " IN (acme,globex)" in merge["parameters"]["predicate"].replace("'", "")

        # the change feed still names exactly the changed rows
        changed = spark().sql(
            f"select tenant_id, id, _change_type from table_changes("
            f"'{table_name(project, 'liquid')}', {merge['version']}) "
            f"where _change_type != 'update_preimage'"
        )
        assert sorted(tuple(row) for row in changed.collect()) == [
            ("acme", 1, "update_postimage"),
            ("acme", 2, "delete"),
            ("acme", 3, "insert"),
        ]

        # the same batch again changes nothing: no MERGE, no version
        run_dbt(["run", *batch(2)])
        assert last_version(project, "liquid")["version"] == merge["version"]

    def test_optimize_follows_the_layout(self, project: Any) -> None:
        run_dbt(["seed"])
        run_dbt(["run", *batch(1)])

        run_dbt(["run-operation", "optimize_table", "--args", "{model_name: liquid}"])
        optimized = last_version(project, "liquid")
        assert optimized["operation"] == "OPTIMIZE"
        assert json.loads(optimized["parameters"]["clusterBy"]) == ["tenant_id", "name"]
        assert json.loads(optimized["parameters"]["zOrderBy"]) == []

        # a partitioned table is Z-ordered by the model's zorder_by config
        run_dbt(["run-operation", "optimize_table", "--args", "{model_name: partitioned}"])
        optimized = last_version(project, "partitioned")
        assert optimized["operation"] == "OPTIMIZE"
        assert json.loads(optimized["parameters"]["zOrderBy"]) == ["name"]

        # Z-order on a clustered table is refused with a message saying what to change
        _, log = run_dbt_and_capture(
            ["run-operation", "optimize_table", "--args", "{model_name: liquid, zorder_by: [id]}"],
            expect_pass=False,
        )
        assert "liquid is liquid-clustered by tenant_id, name" in log
        assert "Drop zorder_by" in log


clustered_and_partitioned_sql = """
{{ config(materialized='table', partition_by=['tenant_id'], liquid_clustered_by=['id']) }}

select 'acme' as tenant_id, 1 as id
"""

clustered_parquet_sql = """
{{ config(materialized='table', file_format='parquet', liquid_clustered_by=['id']) }}

select 1 as id
"""


class TestLiquidClusteringFailures:
    @pytest.fixture(scope="class")
    @classmethod
    def models(cls) -> dict[str, str]:
        return {
            "clustered_and_partitioned.sql": clustered_and_partitioned_sql,
            "clustered_parquet.sql": clustered_parquet_sql,
        }

    def test_impossible_layouts_fail_with_clear_compile_errors(self, project: Any) -> None:
        results = run_dbt(["run"], expect_pass=False)
        messages = {result.node.name: result.message for result in results}
        assert (
            "sets both liquid_clustered_by and partition_by"
            in messages["clustered_and_partitioned"]
        )
        assert "liquid_clustered_by needs file_format 'delta'" in messages["clustered_parquet"]
