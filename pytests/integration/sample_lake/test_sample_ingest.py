"""The bundled sample through ingest, parse, convert and validate: every bad line of the
generator's manifest is quarantined with exactly its codes, and nothing else is."""

from __future__ import annotations

from collections import Counter

import pytest

from profile_lake.delta_reader import read_delta
from pytests.support.expected import erased_line_keys, requested_identities

pytestmark = pytest.mark.integration


def test_build_succeeds_with_every_test(sample_lake) -> None:
    statuses = sample_lake.build.statuses()
    assert statuses, "dbt build ran no node"
    assert set(statuses.values()) <= {"success", "pass"}, statuses


def test_every_bad_line_is_quarantined_with_its_codes(sample_lake, sample_manifest, rows) -> None:
    found: dict[tuple[str, int], Counter] = {}
    for row in rows(
        f"select source_file, line_number, error_code from {sample_lake.table('ingest_errors')}"
    ):
        found.setdefault((row["source_file"], row["line_number"]), Counter())[
            row["error_code"]
        ] += 1
    expected = {
        (bad["file"], bad["line"]): Counter(bad["error_codes"])
        for bad in sample_manifest["bad_lines"]
    }
    assert found == expected


def test_landed_lines_are_accepted_or_quarantined_per_file(
    sample_lake, sample_manifest, rows
) -> None:
    accounting = {
        row["source_file"]: row
        for row in rows(f"select * from {sample_lake.table('ingest_file_accounting')}")
    }
    erased = erased_line_keys(
        sample_lake.landing, "records", requested_identities(sample_lake.landing)
    )
    for stream in sample_manifest["streams"].values():
        for landed in stream["files"]:
            counted = accounting[landed["file"]]
            # the good lines of the person the sample's erasure request names are erased
            erased_here = sum(1 for file, _ in erased if file == landed["file"])
            assert counted["lines_landed"] == landed["lines"], landed["file"]
            assert counted["lines_accepted"] == landed["good"] - erased_here, landed["file"]
            assert counted["lines_quarantined"] == landed["bad"], landed["file"]
            assert counted["lines_erased"] == erased_here, landed["file"]
    (request,) = [row for row in accounting.values() if row["stream"] == "erasures"]
    assert (request["lines_landed"], request["lines_accepted"]) == (1, 1)


def test_the_samples_erasure_request_leaves_erased_rows(sample_lake, rows) -> None:
    """The sample's request lands in the same batch as its person's lines: the run fixes the
    subject as the identity alone (the lake has not seen it yet), and rewrites its lines."""
    (identity,) = {identity for _, identity in requested_identities(sample_lake.landing)}
    (request,) = rows(f"select * from {sample_lake.table('erasure_requests')}")
    # an identity the lake had not seen: counted as none of the lake's identities or records
    assert (request["identities_erased"], request["records_erased"]) == (0, 0)
    erased = rows(f"select * from {sample_lake.table('records', 'landing')} where is_erased")
    assert len(erased) == request["rows_removed"]["landing.records"] > 0
    assert all(row["line"] is None for row in erased)
    staged = rows(
        f"select * from {sample_lake.table('stg_records__changes', 'staging')} where is_erased"
    )
    assert {(row["source_file"], row["line_number"]) for row in staged} == {
        (row["source_file"], row["line_number"]) for row in erased
    }
    assert not any(identity in repr(row) for row in staged + erased)


def test_ingest_errors_keep_the_original_line_and_name_the_field(sample_lake, rows) -> None:
    errors = rows(
        f"select stage, field, error_message, line from {sample_lake.table('ingest_errors')}"
    )
    assert errors
    for error in errors:
        assert error["line"]
        if error["stage"] != "parse":
            assert error["field"] and error["error_message"].startswith(error["field"] + ":")


def test_an_independent_delta_reader_reads_the_outputs(sample_lake, sample_manifest) -> None:
    errors = read_delta(sample_lake.table_path("ingest_errors"))
    assert errors.num_rows == sum(sample_manifest["error_code_counts"].values())
    staged = read_delta(sample_lake.table_path("records", "landing"))
    assert staged.num_rows == sample_manifest["streams"]["records"]["lines"]
