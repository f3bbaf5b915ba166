"""The deltalake reader (tests, `profile-lake summary`) on a table whose MERGEs, deletes and
updates left deletion vectors, as `records` has: it returns what Spark returns, not the rows the
vectors mark deleted, and the summary's row count subtracts them."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable

from profile_lake.delta_reader import has_deletion_vectors, read_delta
from profile_lake.summary import _row_count

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def marked_table(spark, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("deletion-vectors") / "records"
    table = f"delta.`{path}`"
    spark.sql(f"""
        create table {table} (
            tenant_id string, record_id bigint, related_ids array<string>,
            names map<string, string>, payload string
        ) using delta partitioned by (tenant_id)
        tblproperties (
            'delta.enableDeletionVectors' = 'true', 'delta.enableChangeDataFeed' = 'true'
        )
    """)
    spark.sql(f"""
        insert into {table}
        select if(id % 2 = 0, 'acme', 'globex'), id, array(concat('cookie:', id)),
            map('first', concat('n', id)), concat('{{"n":', id, '}}')
        from range(5000)
    """)
    spark.sql(f"delete from {table} where record_id % 7 = 0")
    spark.sql(f"update {table} set payload = '{{}}' where record_id % 11 = 0")
    spark.sql(f"""
        merge into {table} as target
        using (select 'acme' as tenant_id, id * 2 as record_id from range(100)) as source
        on target.tenant_id = source.tenant_id and target.record_id = source.record_id
        when matched then delete
    """)
    return path


def test_the_table_really_has_deletion_vectors(marked_table) -> None:
    table = DeltaTable(str(marked_table))
    assert has_deletion_vectors(table)
    assert pa.table(table.deletion_vectors()).num_rows > 0


def test_read_delta_returns_what_spark_returns(spark, marked_table) -> None:
    expected = sorted(
        (row["record_id"], row["payload"], tuple(row["related_ids"]), row["names"])
        for row in spark.read.format("delta").load(str(marked_table)).collect()
    )
    found = read_delta(marked_table)
    assert found.schema.field("payload").type == pa.string()
    assert found.schema.field("related_ids").type == pa.list_(pa.string())
    assert len(expected) == 5000 - 715 - 85  # 715 multiples of 7, 85 more even ones under 200
    assert (
        sorted(
            (row["record_id"], row["payload"], tuple(row["related_ids"]), dict(row["names"]))
            for row in found.to_pylist()
        )
        == expected
    )
    assert read_delta(marked_table, ["record_id"]).column_names == ["record_id"]


def test_the_summary_counts_only_live_rows(spark, marked_table) -> None:
    live = spark.read.format("delta").load(str(marked_table)).count()
    assert _row_count(marked_table).split() == [str(live), "rows"]


# ---------- history and properties from the log (profile_lake.delta_log), as Spark gives them


@pytest.fixture(scope="module")
def logged_table(spark) -> str:
    """A managed table of the test lake with maintenance, constraints, properties, a MERGE,
    and a commit whose file is older than the one before it (times never go back)."""
    spark.sql("create schema if not exists delta_log_reader")
    table = "delta_log_reader.stamped"
    spark.sql(f"drop table if exists {table}")
    spark.sql(f"""
        create table {table} (tenant_id string, record_id bigint) using delta
        tblproperties ('delta.enableDeletionVectors' = 'true', 'delta.appendOnly' = 'false')
    """)
    spark.sql(f"insert into {table} select 'acme', id from range(10)")
    spark.sql(f"alter table {table} add constraint positive_id check (record_id >= 0)")
    spark.sql(f"alter table {table} set tblproperties ('profile_lake.consumed.s.records' = '4')")
    spark.sql(f"""
        merge into {table} as target using (select 'acme' as tenant_id, 3L as record_id) as source
        on target.record_id = source.record_id when matched then delete
    """)
    spark.sql(f"optimize {table}")
    return table


def test_the_log_gives_sparks_history(spark, logged_table) -> None:
    from profile_lake.spark.delta_history import commit_history, latest_version, local_table_path

    path = local_table_path(spark, logged_table)
    assert path is not None and path.name == "stamped"
    # version 3's file older than version 2's: both readers date it just after version 2
    os.utime(path / "_delta_log" / f"{3:020d}.json", (1_000_000_000, 1_000_000_000))
    described = [
        (row["version"], row["operation"], row["ms"])
        for row in spark.sql(f"describe history {logged_table}")
        .selectExpr("version", "operation", "unix_millis(timestamp) as ms")
        .collect()
    ]
    assert [operation for _, operation, _ in described][:2] == ["OPTIMIZE", "MERGE"]
    read = [
        (c.version, c.operation, int(c.timestamp.timestamp() * 1000))
        for c in commit_history(spark, logged_table)
    ]
    assert read == described
    assert commit_history(spark, logged_table, 2) == commit_history(spark, logged_table)[:2]
    assert latest_version(spark, logged_table) == described[0][0]


def test_the_log_gives_sparks_properties(spark, logged_table) -> None:
    from profile_lake.spark.delta_history import table_properties

    protocol = ("delta.minReaderVersion", "delta.minWriterVersion", "delta.feature.")
    shown = {
        row["key"]: row["value"]
        for row in spark.sql(f"show tblproperties {logged_table}").collect()
        if not row["key"].startswith(protocol)
    }
    assert shown["delta.constraints.positive_id"] == "record_id >= 0"
    assert shown["profile_lake.consumed.s.records"] == "4"
    assert table_properties(spark, logged_table) == shown
