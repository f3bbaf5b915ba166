"""The Delta MERGE macros of macros/delta on real Delta tables, in dbt-spark's functional-test
style (tests/functional/adapter/incremental_strategies): dbt runs in-process on a small project
whose macros are the repository's own files, an incremental model runs twice (then a third
time on the same input) and is compared with the expected rows, and the failure paths are
asserted with expect_pass=False. dbt-spark skips its Delta strategies on the session profile;
ours run here.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from pytests.support.dbt_functional import MERGE_MACRO_FILES, spark, table_name

pytestmark = pytest.mark.integration

MACRO_FILES = MERGE_MACRO_FILES


def table_versions(project: Any, name: str) -> list[dict[str, Any]]:
    """The table's Delta history, oldest version first."""
    history = spark().sql(f"describe history {table_name(project, name)}").orderBy("version")
    return [
        {
            "version": row["version"],
            "operation": row["operation"],
            "parameters": dict(row["operationParameters"] or {}),
            "metrics": {key: int(value) for key, value in (row["operationMetrics"] or {}).items()},
        }
        for row in history.collect()
    ]


def ordered(rows: list[tuple]) -> list[tuple]:
    return sorted(rows, key=lambda row: [(value is not None, value) for value in row])


def table_rows(project: Any, name: str) -> list[tuple]:
    """Every row of a table, in a fixed order (nulls first)."""
    return ordered([tuple(row) for row in spark().table(table_name(project, name)).collect()])


def updated_deleted_inserted(merge_metrics: dict[str, int]) -> tuple[int, int, int]:
    """A MERGE's row counts, from its Delta history metrics."""
    return (
        merge_metrics["numTargetRowsUpdated"],
        merge_metrics["numTargetRowsDeleted"],
        merge_metrics["numTargetRowsInserted"],
    )


def batch(number: int) -> list[str]:
    """`--vars` selecting one batch of a seed of changes."""
    return ["--vars", json.dumps({"batch": number})]


# --------------------------------------------------------------------------------------------
# Upserts, deletes and untouched rows (single-column key, unpartitioned)
# --------------------------------------------------------------------------------------------

# Batch 1 is the first (full) run. Batch 2, per id: 1 unchanged; 2 name changed; 3 null score
# unchanged (null-safe: not an update); 4 deleted; 5 score to null and 9 score from null
# (null-safe: updates); 6 new; 7 deleted but not in the table (nothing happens); 8 absent.
changes_csv = """batch,id,name,score,is_deleted
1,1,alpha,10,false
1,2,bravo,20,false
1,3,charlie,,false
1,4,delta,40,false
1,5,echo,50,false
1,7,golf,70,true
1,8,hotel,80,false
1,9,india,,false
2,1,alpha,10,false
2,2,bravo-2,20,false
2,3,charlie,,false
2,4,delta,40,true
2,5,echo,,false
2,6,foxtrot,60,false
2,7,golf,70,true
2,9,india,90,false
"""

expected_first_run = [
    (1, "alpha", 10),
    (2, "bravo", 20),
    (3, "charlie", None),
    (4, "delta", 40),
    (5, "echo", 50),
    (8, "hotel", 80),
    (9, "india", None),
]

expected_second_run = [
    (1, "alpha", 10),
    (2, "bravo-2", 20),
    (3, "charlie", None),
    (5, "echo", None),
    (6, "foxtrot", 60),
    (8, "hotel", 80),
    (9, "india", 90),
]

upserts_sql = """
{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key='id',
        tblproperties={'delta.enableChangeDataFeed': 'true'},
    )
}}

with

changes as (

    select * from {{ ref('changes') }}
    where batch = {{ var('batch', 1) }}

),

final as (

    select
        id,
        name,
        score{% if is_incremental() %},
        is_deleted as _delete_row
        {%- endif %}

    from changes
    {% if not is_incremental() -%}
    where not is_deleted
    {%- endif %}

)

select * from final
"""


# dbt's incremental_predicates, on dbt's aliases: here excluding the target row of id 2, so that
# batch 2's row 2 finds no match and is inserted beside it (as dbt's `merge` would do)
guarded_upserts_sql = upserts_sql.replace(
    "unique_key='id',",
    "unique_key='id',\n        incremental_predicates=['DBT_INTERNAL_DEST.id <> 2'],",
)


class TestMergeWithDeletes:
    @pytest.fixture(scope="class")
    @classmethod
    def seeds(cls) -> dict[str, str]:
        return {"changes.csv": changes_csv}

    @pytest.fixture(scope="class")
    @classmethod
    def models(cls) -> dict[str, str]:
        return {"upserts.sql": upserts_sql, "guarded_upserts.sql": guarded_upserts_sql}

    def test_upserts_deletes_and_a_repeated_run_writes_nothing(self, project: Any) -> None:
        run_dbt(["seed"])

        # run 1 creates the table: no flag column, no deleted row
        run_dbt(["run", *batch(1)])
        assert table_rows(project, "upserts") == ordered(expected_first_run)
        assert spark().table(table_name(project, "upserts")).columns == ["id", "name", "score"]
        assert len(table_versions(project, "upserts")) == 1

        # run 2: one MERGE that updates 2, 5 and 9, deletes 4, inserts 6 and leaves the rest
        run_dbt(["run", *batch(2)])
        assert table_rows(project, "upserts") == ordered(expected_second_run)
        versions = table_versions(project, "upserts")
        assert [version["operation"] for version in versions[1:]] == ["MERGE"]
        metrics = versions[-1]["metrics"]
        assert updated_deleted_inserted(metrics) == (3, 1, 1), metrics
        # the change feed names every row the MERGE changed, and only those: untouched rows
        # (1, 3 and 8) are not rewritten as updates
        changed = spark().sql(
            f"select id, _change_type from table_changes('{table_name(project, 'upserts')}', "
            f"{versions[-1]['version']}) where _change_type != 'update_preimage'"
        )
        assert sorted(tuple(row) for row in changed.collect()) == [
            (2, "update_postimage"),
            (4, "delete"),
            (5, "update_postimage"),
            (6, "insert"),
            (9, "update_postimage"),
        ]

        # run 3 on the same input: no row would change, so no MERGE and no table version
        _, log = run_dbt_and_capture(["run", *batch(2)])
        assert "upserts: no row changes, MERGE skipped" in log
        assert table_rows(project, "upserts") == ordered(expected_second_run)
        assert len(table_versions(project, "upserts")) == len(versions)

    def test_incremental_predicates_restrict_the_merge(self, project: Any) -> None:
        run_dbt(["seed"])
        guarded = ["--select", "guarded_upserts"]
        run_dbt(["run", "--full-refresh", *guarded, *batch(1)])
        run_dbt(["run", *guarded, *batch(2)])
        assert table_rows(project, "guarded_upserts") == ordered(
            [*expected_second_run, (2, "bravo", 20)]
        )
        merge = table_versions(project, "guarded_upserts")[-1]
        assert merge["operation"] == "MERGE"
        predicate = merge["parameters"]["predicate"]  # as analysed: NOT (id#<n>L = 2)
        assert re.search(r"NOT \(id#\d+L = 2\)", predicate), predicate
        metrics = merge["metrics"]
        assert updated_deleted_inserted(metrics) == (2, 1, 2), metrics


# --------------------------------------------------------------------------------------------
# Partitioned targets: literal partition predicates, several partitions in one source
# --------------------------------------------------------------------------------------------

# Tenants are partitions and ids repeat across tenants (a two-column key). Batch 2 changes acme
# (update, delete, insert), has only an unchanged row of globex (its partition must still be
# named, or that row would miss its match and be inserted twice), and quotes and backslashes in
# partition values (o'hara, back\slash); quiet is not in batch 2 and must be left alone.
tenant_changes_csv = """batch,tenant_id,id,name,is_deleted
1,acme,1,acme-1,false
1,acme,2,acme-2,false
1,globex,1,globex-1,false
1,globex,2,globex-2,false
1,o'hara,1,ohara-1,false
1,back\\slash,1,backslash-1,false
1,quiet,1,quiet-1,false
1,quiet,2,quiet-2,false
2,acme,1,acme-1b,false
2,acme,2,acme-2,true
2,acme,3,acme-3,false
2,globex,1,globex-1,false
2,o'hara,1,ohara-1b,false
2,back\\slash,1,backslash-1,false
"""

expected_tenants = [
    ("acme", 1, "acme-1b"),
    ("acme", 3, "acme-3"),
    ("back\\slash", 1, "backslash-1"),
    ("globex", 1, "globex-1"),
    ("globex", 2, "globex-2"),
    ("o'hara", 1, "ohara-1b"),
    ("quiet", 1, "quiet-1"),
    ("quiet", 2, "quiet-2"),
]

tenant_upserts_sql = """
{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key=['tenant_id', 'id'],
        partition_by=['tenant_id'],
        delete_flag='is_gone',
    )
}}

select
    tenant_id,
    id,
    name{% if is_incremental() %},
    is_deleted as is_gone
    {%- endif %}

from {{ ref('tenant_changes') }}
where
    batch = {{ var('batch', 1) }}
    {% if not is_incremental() -%}
    and not is_deleted
    {%- endif %}
"""

# Partitioned on a column outside the key: a row can move to another partition, and the MERGE
# must still find it where it was (update it, not insert a second copy).
region_changes_csv = """batch,id,region,name,is_deleted
1,1,eu,one,false
1,2,us,two,false
1,3,apac,three,false
2,1,us,one,false
2,2,us,two-b,false
"""

expected_regions = [(1, "us", "one"), (2, "us", "two-b"), (3, "apac", "three")]

region_upserts_sql = """
{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key='id',
        partition_by='region',
    )
}}

select
    id,
    region,
    name{% if is_incremental() %},
    is_deleted as _delete_row
    {%- endif %}

from {{ ref('region_changes') }}
where
    batch = {{ var('batch', 1) }}
    {% if not is_incremental() -%}
    and not is_deleted
    {%- endif %}
"""


def partition_files(project: Any, name: str, tenant: str) -> set[str]:
    rows = spark().sql(
        f"select distinct _metadata.file_path from {table_name(project, name)} "
        f"where tenant_id = '{tenant}'"
    )
    return {row[0] for row in rows.collect()}


def merge_partition_literals(predicate_param: str, column: str) -> set[str] | None:
    """The values of `<column> IN (...)` in the MERGE condition Delta recorded in its history
    (a JSON list holding the analysed condition, values unquoted)."""
    (condition,) = json.loads(predicate_param)
    found = re.search(rf"\b{column}#\d+ IN \((.*)\)\)$", condition)
    return set(found.group(1).split(",")) if found else None


class TestMergeWithDeletesPartitioned:
    @pytest.fixture(scope="class")
    @classmethod
    def seeds(cls) -> dict[str, str]:
        return {"tenant_changes.csv": tenant_changes_csv, "region_changes.csv": region_changes_csv}

    @pytest.fixture(scope="class")
    @classmethod
    def models(cls) -> dict[str, str]:
        return {"tenant_upserts.sql": tenant_upserts_sql, "region_upserts.sql": region_upserts_sql}

    def test_partition_predicates_and_several_partitions_in_one_source(self, project: Any) -> None:
        run_dbt(["seed"])
        run_dbt(["run", *batch(1)])
        quiet_files = partition_files(project, "tenant_upserts", "quiet")
        assert quiet_files

        run_dbt(["run", *batch(2)])
        assert table_rows(project, "tenant_upserts") == ordered(expected_tenants)
        assert table_rows(project, "region_upserts") == ordered(expected_regions)

        # the MERGE names exactly the source's partitions, as literals Delta's conflict
        # detection can read; the untouched partition keeps its files
        merge = table_versions(project, "tenant_upserts")[-1]
        assert merge["operation"] == "MERGE"
        metrics = merge["metrics"]
        assert updated_deleted_inserted(metrics) == (2, 1, 1), metrics
        predicate = merge["parameters"]["predicate"]
        assert merge_partition_literals(predicate, "tenant_id") == {
            "acme",
            "globex",
            "o'hara",
            "back\\slash",
        }, predicate
        assert partition_files(project, "tenant_upserts", "quiet") == quiet_files

        # no partition predicate on a column outside the key: it would miss a moved row
        merge = table_versions(project, "region_upserts")[-1]
        assert merge["operation"] == "MERGE"
        predicate = merge["parameters"]["predicate"]
        assert merge_partition_literals(predicate, "region") is None, predicate


# --------------------------------------------------------------------------------------------
# Rows with versions: merge_change_columns, and the append_new_rows strategy
# --------------------------------------------------------------------------------------------

# Batch 2 repeats id 1's version with another name: by the model's contract (equal key and
# version mean equal rows) that cannot happen, and it shows that only versions are compared.
# Batch 3 brings id 1's next version and id 2 unchanged. Batch 4 is empty. Batch 5 brings id
# 1's next version and id 2's version again with another name: the MERGE compares versions too.
versioned_changes_csv = """batch,id,name,version
1,1,alpha,1
1,2,bravo,1
2,1,alpha-same-version,1
3,1,alpha-2,2
3,2,bravo,1
5,1,alpha-3,3
5,2,bravo-same-version,1
"""

versioned_upserts_sql = """
{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key='id',
        merge_change_columns=['version'],
    )
}}

with

changes as (

    select id, name, version from {{ ref('versioned_changes') }}
    where batch = {{ var('batch', 1) }}

),

final as (

    select
        id,
        name,
        version{% if is_incremental() %},
        false as _delete_row
        {%- endif %}

    from changes

)

select * from final
"""

appended_versions_sql = """
{{ config(materialized='incremental', incremental_strategy='append_new_rows') }}

with

changes as (

    select id, name, version from {{ ref('versioned_changes') }}
    where batch = {{ var('batch', 1) }}

),

final as (

    select id, name, version from changes

)

select * from final
"""


class TestVersionedRows:
    @pytest.fixture(scope="class")
    @classmethod
    def seeds(cls) -> dict[str, str]:
        return {"versioned_changes.csv": versioned_changes_csv}

    @pytest.fixture(scope="class")
    @classmethod
    def models(cls) -> dict[str, str]:
        return {
            "versioned_upserts.sql": versioned_upserts_sql,
            "appended_versions.sql": appended_versions_sql,
        }

    def test_merge_change_columns_compare_versions_only(self, project: Any) -> None:
        run_dbt(["seed"])
        only = ["--select", "versioned_upserts"]
        run_dbt(["run", *only, *batch(1)])
        first = [(1, "alpha", 1), (2, "bravo", 1)]

        # the same key and version: counted as unchanged, so no MERGE and no version
        _, log = run_dbt_and_capture(["run", *only, *batch(2)])
        assert "versioned_upserts: no row changes, MERGE skipped" in log
        assert table_rows(project, "versioned_upserts") == ordered(first)
        assert len(table_versions(project, "versioned_upserts")) == 1

        # a new version MERGEs; the MERGE itself still leaves the unchanged row alone
        run_dbt(["run", *only, *batch(3)])
        assert table_rows(project, "versioned_upserts") == ordered(
            [(1, "alpha-2", 2), (2, "bravo", 1)]
        )
        merge = table_versions(project, "versioned_upserts")[-1]
        assert merge["operation"] == "MERGE"
        assert updated_deleted_inserted(merge["metrics"]) == (1, 0, 0), merge["metrics"]

        # the MERGE's update condition compares versions only: id 2's other name is not taken
        # (so the MERGE need not read the target's other columns)
        run_dbt(["run", *only, *batch(5)])
        assert table_rows(project, "versioned_upserts") == ordered(
            [(1, "alpha-3", 3), (2, "bravo", 1)]
        )
        merge = table_versions(project, "versioned_upserts")[-1]
        assert updated_deleted_inserted(merge["metrics"]) == (1, 0, 0), merge["metrics"]

    def test_append_new_rows_appends_and_skips_an_empty_run(self, project: Any) -> None:
        run_dbt(["seed"])
        only = ["--select", "appended_versions"]
        run_dbt(["run", "--full-refresh", *only, *batch(1)])
        run_dbt(["run", *only, *batch(3)])
        assert table_rows(project, "appended_versions") == ordered(
            [(1, "alpha", 1), (2, "bravo", 1), (1, "alpha-2", 2), (2, "bravo", 1)]
        )
        versions = table_versions(project, "appended_versions")
        assert [version["operation"] for version in versions[1:]] == ["WRITE"], versions
        assert versions[-1]["metrics"]["numOutputRows"] == 2, versions[-1]["metrics"]

        _, log = run_dbt_and_capture(["run", *only, *batch(4)])
        assert "appended_versions: no new rows, INSERT skipped" in log
        assert len(table_versions(project, "appended_versions")) == len(versions)


# --------------------------------------------------------------------------------------------
# Failure paths: compile errors that say what to change
# --------------------------------------------------------------------------------------------

without_flag_sql = """
{{ config(materialized='incremental', incremental_strategy='merge_with_deletes', unique_key='id') }}

select 1 as id, 'one' as name
"""

without_key_sql = """
{{ config(materialized='incremental', incremental_strategy='merge_with_deletes') }}

select 1 as id, 'one' as name{% if is_incremental() %}, false as _delete_row{% endif %}
"""

unknown_change_column_sql = """
{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key='id',
        merge_change_columns=['revision'],
    )
}}

select 1 as id, 'one' as name{% if is_incremental() %}, false as _delete_row{% endif %}
"""

parquet_append_sql = """
{{
    config(
        materialized='incremental', incremental_strategy='append_new_rows', file_format='parquet'
    )
}}

select 1 as id
"""

parquet_target_sql = """
{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key='id',
        file_format='parquet',
    )
}}

select 1 as id, 'one' as name
"""


class TestMergeWithDeletesFailures:
    @pytest.fixture(scope="class")
    @classmethod
    def models(cls) -> dict[str, str]:
        return {
            "without_flag.sql": without_flag_sql,
            "without_key.sql": without_key_sql,
            "parquet_target.sql": parquet_target_sql,
            "unknown_change_column.sql": unknown_change_column_sql,
            "parquet_append.sql": parquet_append_sql,
        }

    def test_misconfigured_models_fail_with_clear_compile_errors(self, project: Any) -> None:
        # first runs create the Delta tables (a first run selects no flag column)
        run_dbt(["run", "--select", "without_flag", "without_key", "unknown_change_column"])

        results = run_dbt(["run"], expect_pass=False)
        assert {result.node.name: str(result.status) for result in results} == {
            "without_flag": "error",
            "without_key": "error",
            "parquet_target": "error",
            "unknown_change_column": "error",
            "parquet_append": "error",
        }
        messages = {result.node.name: result.message for result in results}
        for name, message in messages.items():
            assert f"Compilation Error in model {name}" in message, message
        assert "must select a boolean column '_delete_row'" in messages["without_flag"]
        assert "needs a unique_key config" in messages["without_key"]
        assert "merge_with_deletes needs file_format 'delta'" in messages["parquet_target"]
        assert "(got 'parquet')" in messages["parquet_target"]
        assert (
            "names merge_change_columns revision that are not columns"
            in messages["unknown_change_column"]
        )
        assert "append_new_rows needs file_format 'delta'" in messages["parquet_append"]
