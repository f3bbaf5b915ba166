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

from pytests.support.dbt_functional import MERGE_MACRO_FILES, spark, table_name
from pytests.support.dbt_runner import PROJECT_DIR

pytestmark = pytest.mark.integration

MACRO_FILES = [
    *MERGE_MACRO_FILES,
    PROJECT_DIR / "macros" / "maintenance" / "optimize_table.sql",
    PROJECT_DIR / "macros" / "maintenance" / "optimize_layouts.sql",
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


# Keys scattered over both tenants' files: written in random order, 20,000 rows a tenant in
# files of 500 rows, so that before any clustering every file spans nearly every key. Sorted
# as well as distributed: with one shuffle partition (a small lake's) distributing alone keeps
# the rows in key order.
scattered_sql = """
{{
    config(
        materialized='table',
        partition_by=['tenant_id'],
        zorder_by=['profile_id'],
        tblproperties={'delta.dataSkippingStatsColumns': 'profile_id'},
        pre_hook='set spark.sql.files.maxRecordsPerFile = 500',
        post_hook='reset spark.sql.files.maxRecordsPerFile',
    )
}}

select
    tenant_id,
    profile_id

from (
    select
        if(id % 2 = 0, 'acme', 'globex') as tenant_id,
        concat('p', lpad(cast(id as string), 6, '0')) as profile_id
    from range(40000)
)
distribute by tenant_id, rand(7)
sort by tenant_id, rand(7)
"""

RECOMPUTED = [("acme", f"p{number:06d}") for number in range(1000, 40000, 8000)] + [
    ("globex", f"p{number:06d}") for number in range(1001, 40000, 8000)
]


def files_read(sql: str) -> int:
    """The files Spark's scans read for `sql` (after Delta's partition and data skipping),
    from the executed plan's scan metrics."""
    frame = spark().sql(sql)
    frame.collect()
    plan = frame._jdf.queryExecution().executedPlan()
    leaves = plan.collectLeaves()
    counts = [leaves.apply(index).metrics() for index in range(leaves.size())]
    return sum(
        metrics.apply("numFiles").value() for metrics in counts if metrics.contains("numFiles")
    )


class TestKeyFileSkipping:
    """A mart recomputing a few keys reads a handful of files of a table clustered by its key:
    the keys are literal equalities (profile_lake.mart_keys), which Delta checks file by file
    against min/max statistics, and the maintenance Z-order keeps the key ranges narrow."""

    @pytest.fixture(scope="class")
    @classmethod
    def models(cls) -> dict[str, str]:
        return {"scattered.sql": scattered_sql}

    def test_a_ten_key_recompute_reads_a_handful_of_files(self, project: Any) -> None:
        from profile_lake.mart_keys import evaluated_keys, key_predicate

        run_dbt(["run"])
        table = table_name(project, "scattered")
        keys = evaluated_keys(("tenant_id", "profile_id"), RECOMPUTED, 2000, "unused", "")
        predicate = key_predicate(["tenant_id", "profile_id"], keys)
        recompute = f"select * from {table} where {predicate}"
        assert spark().sql(recompute).count() == 10
        unclustered_files = detail(project, "scattered")["numFiles"]
        assert unclustered_files >= 60
        # laid out by tenant only, the keys are in nearly every file
        assert files_read(recompute) > unclustered_files / 2

        # the nightly run-operation Z-orders each table by its zorder_by key, here in files of about
        # 500 rows (Delta's default aims at 1 GB files)
        spark().conf.set("spark.databricks.delta.optimize.maxFileSize", str(4 * 1024))
        try:
            run_dbt(["run-operation", "optimize_layouts"])
        finally:
            spark().conf.unset("spark.databricks.delta.optimize.maxFileSize")
        clustered_files = detail(project, "scattered")["numFiles"]
        assert clustered_files >= 40

        assert spark().sql(recompute).count() == 10
        assert files_read(recompute) <= 12, f"of {clustered_files} files"
        # more keys of a tenant are a search tree of ranges: still one file or so per key
        many = [("acme", f"p{number:06d}") for number in range(500, 40000, 2000)]
        tree = key_predicate(
            ["tenant_id", "profile_id"],
            evaluated_keys(("tenant_id", "profile_id"), many, 2000, "", ""),
        )
        assert " < " in tree
        assert spark().sql(f"select * from {table} where {tree}").count() == 20
        assert files_read(f"select * from {table} where {tree}") <= 24
        # Spark keeps the equalities: an IN list would be one min-max range to Delta
        optimized = str(spark().sql(recompute)._jdf.queryExecution().optimizedPlan())
        assert " IN (" not in optimized.upper() and "INSET" not in optimized.upper()
        in_list = (
            f"select * from {table} where (tenant_id = 'acme' and profile_id in "
            f"({', '.join(repr(key) for tenant, key in RECOMPUTED if tenant == 'acme')}))"
        )
        assert files_read(in_list) > files_read(
            f"select * from {table} where {predicate} and tenant_id = 'acme'"
        )
