"""Data tests of the marts check what the run wrote, read from the table's own change feed
(changes_this_run, docs/checks.md): on a real Delta table, MERGEd as an incremental mart is, the
scoped subquery holds exactly the rows the run inserted or updated, the uniqueness subquery also
holds the old row a new one collides with, and a table whose feed is off is checked whole."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from profile_lake.checks import (
    ChangesThisRun,
    RunRows,
    changes_view_name,
    key_scope_sql,
    scoped_sql,
)
from profile_lake.spark.checks import rows_written

pytestmark = pytest.mark.integration

SCHEMA = "checks_changes"
WHERE = "changes_this_run()"


def create_mart(spark, name: str, change_feed: bool) -> str:
    """A table of five keyed rows, as a mart's last run left it."""
    table = f"{SCHEMA}.{name}"
    spark.sql(f"create schema if not exists {SCHEMA}")
    spark.sql(f"""
        create or replace table {table} (profile_id string, segment_count int)
        using delta tblproperties (
            'delta.enableDeletionVectors' = 'true',
            'delta.enableChangeDataFeed' = '{str(change_feed).lower()}'
        )
    """)
    spark.sql(f"insert into {table} select concat('p', id), 1 from range(5)")
    return table


def merge_a_run(spark, table: str) -> datetime:
    """A run that updates p1, inserts p7 and a second p2 (a collision), and deletes p3; its
    start."""
    time.sleep(1)
    started = datetime.now(UTC)
    spark.sql(f"""
        merge into {table} as target
        using (
            select * from values ('p1', 2), ('p3', null), ('p7', null) as t(profile_id, n)
        ) as source
        on target.profile_id = source.profile_id
        when matched and source.n is null then delete
        when matched then update set segment_count = source.n
        when not matched then insert (profile_id, segment_count) values (source.profile_id, null)
    """)
    spark.sql(f"insert into {table} values ('p2', 5)")
    spark.sql(f"alter table {table} set tblproperties ('profile_lake.stamp.test' = '1')")
    return started


def profiles_in(spark, subquery: str) -> list[tuple[str, int | None]]:
    rows = spark.sql(f"select profile_id, segment_count from {subquery}").collect()
    return sorted((row["profile_id"], row["segment_count"]) for row in rows)


@pytest.fixture(scope="module")
def mart(spark) -> tuple[str, RunRows]:
    table = create_mart(spark, "profile_segments", change_feed=True)
    started = merge_a_run(spark, table)
    return table, rows_written(spark, table, ChangesThisRun(), started)


def test_the_run_rows_are_a_session_view_of_the_tables_change_feed(mart) -> None:
    table, run_rows = mart
    assert run_rows == RunRows(changes_view_name(table), "true")


def test_a_test_reads_only_the_rows_the_run_inserted_or_updated(spark, mart) -> None:
    _, run_rows = mart
    # p3's delete leaves no row; p0, p2's old row and p4 were not written
    assert profiles_in(spark, scoped_sql(WHERE, run_rows)) == [
        ("p1", 2),
        ("p2", 5),
        ("p7", None),
    ]


def test_a_uniqueness_test_sees_the_old_row_a_new_one_collides_with(spark, mart) -> None:
    table, run_rows = mart
    widened = key_scope_sql(table, WHERE, run_rows, ["profile_id"])
    assert profiles_in(spark, widened) == [("p1", 2), ("p2", 1), ("p2", 5), ("p7", None)]


def test_a_table_the_run_did_not_write_is_not_checked(spark, mart) -> None:
    table, _ = mart
    assert rows_written(spark, table, ChangesThisRun(), datetime.now(UTC)) == RunRows(
        table, "false"
    )


def test_a_table_whose_feed_is_off_is_checked_whole(spark) -> None:
    table = create_mart(spark, "identity_index", change_feed=False)
    run_rows = rows_written(spark, table, ChangesThisRun(), merge_a_run(spark, table))
    assert (run_rows.source, run_rows.predicate) == (table, "true")
    assert "change feed is off" in run_rows.fallback_reason
    assert len(profiles_in(spark, scoped_sql(WHERE, run_rows))) == 6
