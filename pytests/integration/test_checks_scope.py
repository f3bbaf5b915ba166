"""Data tests of incremental tables check the rows the run wrote (rows_this_run, docs/checks.md):
an old bad row planted in the table is not reported by an incremental `dbt build`, but is with
the var full_checks; a new row colliding with an old one fails the uniqueness check anyway. The
table's one test (table_checks) holds every check: which of them failed is read from the
`failed_check` of the rows it returned.

One small lake (schema checks_scope): one sample file built, two rows planted in the staged
records with an old batch, a second file landed and built, then a build with full_checks.
Only stg_records__changes (and the tenants seed its tests read) is built.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
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
# the table's one data test, and the failed_check of its not_null and uniqueness checks' rows
CHECKS = "table_checks_stg_records__changes"
NOT_NULL = "not_null: is_accepted"
UNIQUE_LINE = "unique: source_file, line_number"
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


@dataclass(frozen=True)
class Checked:
    """A build, and what the table's test found in it: its status and the checks it failed."""

    run: DbtRun
    status: str
    failed: frozenset[str]


def checked(spark, run: DbtRun) -> Checked:
    """The table's test in `run`: its compiled query, run again right after the build (the scope
    is written out in it as a predicate over the table, so it reads the rows that build checked),
    returns as many rows as dbt counted, each naming the check it failed."""
    (result,) = [item for item in run.result.result.results if item.node.name == CHECKS]
    rows = spark.sql(result.node.compiled_code).select("failed_check").collect()
    assert len(rows) == result.failures
    return Checked(run, str(result.status), frozenset(row["failed_check"] for row in rows))


@pytest.fixture(scope="module")
def runs(spark, lake_home: Path, tmp_path_factory) -> dict[str, Checked]:
    schema = "checks_scope"
    landing = tmp_path_factory.mktemp("checks-scope-landing")
    (landing / "records").mkdir()
    shutil.copy(SAMPLE_RECORDS / FIRST_FILE, landing / "records" / FIRST_FILE)
    build(schema, landing, lake_home, passes=True)
    plant_old_rows(spark, f"{schema}_staging.stg_records__changes")
    shutil.copy(SAMPLE_RECORDS / NEXT_FILE, landing / "records" / NEXT_FILE)
    # each read right after its build: the next one writes the table again
    incremental = checked(spark, build(schema, landing, lake_home, passes=False))
    full_checks = checked(
        spark,
        build(schema, landing, lake_home, passes=False, extra=("--vars", "{full_checks: true}")),
    )
    return {"incremental": incremental, "full_checks": full_checks}


def test_an_incremental_run_checks_only_the_rows_it_wrote(runs) -> None:
    assert runs["incremental"].run.statuses()["stg_records__changes"] == "success"
    # the planted row without is_accepted is old: not this run's to check
    assert not any(check.startswith("not_null") for check in runs["incremental"].failed)


def test_a_new_row_colliding_with_an_old_key_fails_the_uniqueness_check(runs) -> None:
    assert runs["incremental"].status == "fail"
    assert runs["incremental"].failed == {UNIQUE_LINE}


def test_the_full_checks_var_checks_every_row(runs) -> None:
    assert runs["full_checks"].status == "fail"
    # the planted row and the collision; the table's other checks (the op's accepted values,
    # the tenant's relationship) still pass on every row
    assert runs["full_checks"].failed == {NOT_NULL, UNIQUE_LINE}
