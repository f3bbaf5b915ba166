"""Data tests of incremental tables check the rows the run wrote (rows_this_run, docs/checks.md):
an old bad row planted in the table is not reported by an incremental `dbt build`, but is with
the var full_checks; a new row colliding with an old one fails the uniqueness test anyway.

One small lake (schema checks_scope): one sample file built, two rows planted in the staged
records with an old batch, a second file landed and built, then a build with full_checks.
Only stg_records__changes (and the tenants seed its tests read) is built.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from pytests.support.dbt_runner import PROJECT_DIR, DbtRun, run_dbt

pytestmark = pytest.mark.integration

SAMPLE_RECORDS = PROJECT_DIR / "sample" / "landing" / "records"
FIRST_FILE = "part-00000.jsonl"
NEXT_FILE = "part-00001.jsonl"
# the tests of the other staging models read tenants too: cautious leaves them out
SELECTION = ["--select", "tenants", "stg_records__changes", "--indirect-selection", "cautious"]
# the table's not_null_columns test (is_accepted among its columns)
NOT_NULL = "not_null_columns_stg_records__changes"
UNIQUE_LINE = "unique_combination_stg_records__changes_source_file__line_number"
PLANTED_LINE_NUMBER = 999_999


def build(
    schema: str, landing: Path, lake_home: Path, passes: bool, extra: tuple[str, ...] = ()
) -> DbtRun:
    return run_dbt(
        ["build", *SELECTION, *extra],
        expect_pass=passes,
        env={"PROFILE_LAKE_SCHEMA": schema, "PROFILE_LAKE_LANDING": str(landing)},
        target_path=lake_home / "target" / schema,
    )


def plant_old_rows(spark, table: str) -> None:
    """Two rows with an old batch: one with no is_accepted (a not_null failure), and one on the
    line of the file not landed yet (a collision once it lands)."""
    old = spark.table(table).where(F.col("line_number") == 1).limit(1)
    bad = old.withColumn("line_number", F.lit(PLANTED_LINE_NUMBER).cast("bigint")).withColumn(
        "is_accepted", F.lit(None).cast("boolean")
    )
    source_file = old.first()["source_file"]
    colliding = old.withColumn(
        "source_file", F.lit(source_file.replace(FIRST_FILE, NEXT_FILE))
    ).withColumn("is_accepted", F.lit(False))
    bad.unionByName(colliding).write.format("delta").mode("append").saveAsTable(table)


def status_of(statuses: dict[str, str], prefix: str) -> str:
    """The status of the one test named `prefix`... (dbt may hash the end of a long name)."""
    (name,) = [name for name in statuses if name.startswith(prefix)]
    return statuses[name]


@pytest.fixture(scope="module")
def runs(spark, lake_home: Path, tmp_path_factory) -> dict[str, DbtRun]:
    schema = "checks_scope"
    landing = tmp_path_factory.mktemp("checks-scope-landing")
    (landing / "records").mkdir()
    shutil.copy(SAMPLE_RECORDS / FIRST_FILE, landing / "records" / FIRST_FILE)
    build(schema, landing, lake_home, passes=True)
    plant_old_rows(spark, f"{schema}_staging.stg_records__changes")
    shutil.copy(SAMPLE_RECORDS / NEXT_FILE, landing / "records" / NEXT_FILE)
    return {
        "incremental": build(schema, landing, lake_home, passes=False),
        "full_checks": build(
            schema, landing, lake_home, passes=False, extra=("--vars", "{full_checks: true}")
        ),
    }


def test_an_incremental_run_checks_only_the_rows_it_wrote(runs) -> None:
    statuses = runs["incremental"].statuses()
    assert statuses["stg_records__changes"] == "success"
    # the planted row without is_accepted is old: not this run's to check
    assert status_of(statuses, NOT_NULL) == "pass"


def test_a_new_row_colliding_with_an_old_key_fails_the_uniqueness_test(runs) -> None:
    assert runs["incremental"].statuses()[UNIQUE_LINE] == "fail"


def test_the_full_checks_var_checks_every_row(runs) -> None:
    statuses = runs["full_checks"].statuses()
    assert status_of(statuses, NOT_NULL) == "fail"
    assert statuses[UNIQUE_LINE] == "fail"
    # the other tests of the table still pass on every row
    passing = {name for name, status in statuses.items() if status == "pass"}
    assert any(name.startswith("accepted_values_stg_records__changes_op") for name in passing)
