"""Enforced contracts on incremental models, through this project's incremental materialization
(macros/incremental), in dbt-spark's functional-test style: dbt runs in-process on a small
project whose macros are the repository's own files.

dbt checks a contract when it builds a table, not when an incremental run merges or appends
into it; ours checks those runs too, leaving out merge_with_deletes' delete flag (no column of
the table). With `on_schema_change: append_new_columns` (the marts' setting: the contract
changes only by adding to it) a column added to the model and its YAML reaches the table in
place, and a column dropped or retyped stops the run, naming the full refresh that rebuilds it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture, write_file

from pytests.support.dbt_functional import spark, table_name
from pytests.support.dbt_runner import PROJECT_DIR

pytestmark = pytest.mark.integration

MACRO_FILES = sorted((PROJECT_DIR / "macros").rglob("*.sql"))

changes_csv = """batch,id,name,score,is_deleted
1,1,alpha,10,false
1,2,bravo,20,false
1,3,charlie,30,false
2,2,bravo-2,20,false
2,3,charlie,30,true
2,4,delta,40,false
3,1,alpha-3,10,false
3,5,echo,50,false
"""

# {columns}: the model's columns beyond id and name; its incremental runs add the delete flag
upserts_sql = """
{{{{
    config(
        materialized='incremental',
        incremental_strategy='merge_with_deletes',
        unique_key='id',
        on_schema_change='append_new_columns',
        contract={{'enforced': true}},
    )
}}}}

with

changes as (

    select * from {{{{ ref('changes') }}}}
    where batch = {{{{ var('batch', 1) }}}}

),

final as (

    select
        id,
        name,
        {columns}{{% if is_incremental() %}},
        is_deleted as _delete_row
        {{%- endif %}}

    from changes
    {{% if not is_incremental() -%}}
    where not is_deleted
    {{%- endif %}}

)

select * from final
"""

appended_sql = """
{{{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        on_schema_change='append_new_columns',
        contract={{'enforced': true}},
    )
}}}}

select
    batch,
    id,
    {columns}
from {{{{ ref('changes') }}}}
where batch = {{{{ var('batch', 1) }}}}
"""

# {columns}: YAML entries of the columns beyond the keys, each "- {name: ..., data_type: ...}"
schema_yml = """
version: 2
models:
  - name: upserts
    columns:
      - {{name: id, data_type: bigint}}
      - {{name: name, data_type: string}}
{columns}
  - name: appended
    columns:
      - {{name: batch, data_type: bigint}}
      - {{name: id, data_type: bigint}}
{columns}
"""

SCORE = "score"
SCORE_YML = "      - {name: score, data_type: bigint}"
SCORE_AS_TEXT = "cast(score as string) as score"
NAME_LENGTH = "score,\n        char_length(name) as name_length"
NAME_LENGTH_YML = SCORE_YML + "\n      - {name: name_length, data_type: int}"
NAME_LENGTH_AS_BIGINT = "score,\n        cast(char_length(name) as bigint) as name_length"
NAME_LENGTH_AS_BIGINT_YML = SCORE_YML + "\n      - {name: name_length, data_type: bigint}"


def table_rows(project: Any, name: str) -> list[tuple]:
    return sorted(tuple(row) for row in spark().table(table_name(project, name)).collect())


def table_version(project: Any, name: str) -> int:
    return spark().sql(f"describe history {table_name(project, name)}").first()["version"]


def write_models(columns: str, columns_yml: str) -> None:
    write_file(upserts_sql.format(columns=columns), "models", "upserts.sql")
    write_file(appended_sql.format(columns=columns), "models", "appended.sql")
    write_file(schema_yml.format(columns=columns_yml), "models", "schema.yml")


def run_batch(number: int, expect_pass: bool = True) -> str:
    _, log = run_dbt_and_capture(
        ["run", "--vars", json.dumps({"batch": number})], expect_pass=expect_pass
    )
    return log


class TestIncrementalContracts:
    @pytest.fixture(scope="class")
    @classmethod
    def seeds(cls) -> dict[str, str]:
        return {"changes.csv": changes_csv}

    @pytest.fixture(scope="class")
    @classmethod
    def models(cls) -> dict[str, str]:
        return {
            "upserts.sql": upserts_sql.format(columns=SCORE),
            "appended.sql": appended_sql.format(columns=SCORE),
            "schema.yml": schema_yml.format(columns=SCORE_YML),
        }

    def test_incremental_runs_keep_to_the_contract_and_it_only_grows(self, project: Any) -> None:
        run_dbt(["seed"])
        run_batch(1)
        # run 2 merges with its delete flag, which the contract does not list
        run_batch(2)
        assert table_rows(project, "upserts") == [
            (1, "alpha", 10),
            (2, "bravo-2", 20),
            (4, "delta", 40),
        ]
        assert len(table_rows(project, "appended")) == 6
        versions = {name: table_version(project, name) for name in ("upserts", "appended")}

        # a column's type changed in the SQL and not in the contract: both runs stop before
        # writing, with dbt's contract error
        write_models(SCORE_AS_TEXT, SCORE_YML)
        log = run_batch(3, expect_pass=False)
        for name in versions:
            assert f"Compilation Error in model {name} " in log, log
        assert "This model has an enforced contract that failed" in log
        assert "data type mismatch" in log and "| score " in log
        assert {name: table_version(project, name) for name in versions} == versions

        # a column added to the SQL and the contract: each table gains it, and the run writes it
        write_models(NAME_LENGTH, NAME_LENGTH_YML)
        run_batch(3)
        for name in versions:
            columns = spark().table(table_name(project, name)).columns
            assert columns[-2:] == ["score", "name_length"], (name, columns)
        assert table_rows(project, "upserts") == [
            (1, "alpha-3", 10, 7),
            (2, "bravo-2", 20, None),
            (4, "delta", 40, None),
            (5, "echo", 50, 4),
        ]
        lengths = [row[-1] for row in table_rows(project, "appended")]
        assert sorted(length for length in lengths if length is not None) == [4, 7]
        versions = {name: table_version(project, name) for name in versions}

        # a column dropped, or retyped, in the SQL and the contract alike: the contract only
        # grows, so each run stops before writing, naming the columns and the full refresh
        for columns, columns_yml, change in (
            (SCORE, SCORE_YML, "columns the model no longer selects: name_length"),
            (NAME_LENGTH_AS_BIGINT, NAME_LENGTH_AS_BIGINT_YML, "name_length (int, now bigint)"),
        ):
            write_models(columns, columns_yml)
            log = run_batch(3, expect_pass=False)
            for name in versions:
                assert f"Model {name} has an enforced contract, which changes only by adding" in log
                assert f"dbt build --full-refresh --select {name}." in log
            assert change in log, log
            assert {name: table_version(project, name) for name in versions} == versions

        # the full refresh it names rebuilds each table with the changed column
        run_dbt(["run", "--full-refresh", "--vars", json.dumps({"batch": 3})])
        for name in versions:
            assert (
                spark()
                .table(table_name(project, name))
                .schema["name_length"]
                .dataType.simpleString()
                == "bigint"
            )
