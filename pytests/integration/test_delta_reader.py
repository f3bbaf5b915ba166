"""The deltalake reader (tests, `profile-lake summary`) on a table whose MERGEs, deletes and
updates left deletion vectors, as `records` has: it returns what Spark returns, not the rows the
vectors mark deleted, and the summary's row count subtracts them."""

from __future__ import annotations

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
