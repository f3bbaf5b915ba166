"""`records` from the bundled sample equals a plain Python fold of the good lines (but those of
the person the sample's erasure request names), and a build with no new landing files changes
no table version."""

from __future__ import annotations

import json

import pytest
from deltalake import DeltaTable

from profile_lake.delta_reader import has_deletion_vectors
from pytests.support.expected import (
    erased_line_keys,
    expected_records,
    good_messages,
    requested_identities,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def expected(sample_lake, sample_manifest) -> dict:
    bad = {(b["file"], b["line"]) for b in sample_manifest["bad_lines"] if b["stream"] == "records"}
    # the sample's erasure request: its person's lines are not in records (SPEC.md section 7)
    erased = erased_line_keys(
        sample_lake.landing, "records", requested_identities(sample_lake.landing)
    )
    assert erased, "the sample's erasure request names no one of the sample"
    return expected_records(good_messages(sample_lake.landing, "records", bad | erased))


def test_records_equal_the_in_order_fold_of_accepted_events(sample_lake, expected, rows) -> None:
    found = {
        (row["tenant_id"], row["record_id"]): json.loads(row["payload"])
        for row in rows(f"select tenant_id, record_id, payload from {sample_lake.table('records')}")
    }
    assert found.keys() == expected.keys()
    assert found == expected


def _versions(spark, table: str) -> int:
    return spark.sql(f"describe history {table}").agg({"version": "max"}).first()[0]


def test_a_build_without_new_files_changes_no_version(sample_lake, spark) -> None:
    watched = [sample_lake.table("records"), sample_lake.table("int_record_states", "intermediate")]
    before = {table: _versions(spark, table) for table in watched}
    sample_lake.dbt(["build", "--select", "+records"])
    after = {table: _versions(spark, table) for table in watched}
    assert after[sample_lake.table("records")] == before[sample_lake.table("records")]


def test_records_marks_replaced_rows_in_deletion_vectors(sample_lake) -> None:
    # a MERGE then rewrites only what it changes, not every row of the files it touches
    assert has_deletion_vectors(DeltaTable(str(sample_lake.table_path("records"))))
