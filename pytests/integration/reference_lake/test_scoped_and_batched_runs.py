"""Runs scoped to some tenants (var tenants) advance per-tenant watermarks independently, and
the ingest stages each landed file exactly once (SPEC.md section 2) however the runs batch the
files: interleaved scoped runs, the second wave in micro-batches of one file (the scoped lake of
conftest.py, on pytests/support/two_waves.py's waves), end in the records a plain in-order fold
of the landed lines gives (SPEC.md section 4), and in the same tables as runs over every tenant
that were killed and repeated (test_build_fault_injection.py compares them, ingest batch
numbers aside). int_record_states folds all of a run's micro-batches into one version per
record, which records applies in one MERGE and record_notifications notifies in one commit.
Other scoped runs (tenants gone from records, quiet tenants, states left behind):
test_tenant_scoped_runs.py.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from profile_lake.delta_reader import read_delta
from pytests.integration.reference_lake.conftest import ScopedLake, tenants_of
from pytests.support.dbt_runner import run_dbt
from pytests.support.expected import erased_line_keys, expected_records, good_messages
from pytests.support.landing import landed_lines, line_keys, staged_lines
from pytests.support.scoped_lake import latest_version
from pytests.support.two_waves import ERASED_IDENTITY, ERASED_TENANT, Waves

pytestmark = pytest.mark.integration


def test_a_scoped_run_touches_only_its_tenants(scoped_lake: ScopedLake) -> None:
    assert scoped_lake.after_acme == {
        "staged": {"acme", "globex"},
        "states": {"acme"},
        "records": {"acme"},
        "notified": {"acme"},
    }
    assert scoped_lake.after_globex == {
        "staged": {"acme", "globex"},
        "states": {"acme", "globex"},
        "records": {"acme", "globex"},
        "notified": {"acme", "globex"},
    }


def test_files_landed_in_two_waves_are_staged_once_in_micro_batches_of_one_file(
    scoped_lake: ScopedLake,
) -> None:
    """The first run, though scoped to globex, stages all of wave 1; the run for every tenant
    stages wave 2 one file per micro-batch, a gzipped file among them."""
    first, second = scoped_lake.first_run, scoped_lake.second_wave
    assert first.staged == first.landed
    assert second.staged == second.landed
    assert len(second.landed) > len(first.landed)
    second_wave_files = {file for file, _ in second.landed.keys() - first.landed.keys()}
    assert len(second_wave_files) > 1
    assert any(file.endswith(".gz") for file in second_wave_files), second_wave_files
    assert second.batches == len(second_wave_files) + 1


def test_a_run_with_no_new_file_stages_nothing(scoped_lake: ScopedLake) -> None:
    """acme's and globex's runs after wave 1 found no new file: the landing tables are as the
    first run left them. In the end each records line is in stg_records__changes once (globex's
    run found its lines staged already). test_deleting_superseded_states_changes_no_result
    checks a run with no new file after the micro-batches."""
    scoped = scoped_lake.lake
    assert scoped_lake.no_new_file == scoped_lake.first_run
    staged_changes = read_delta(
        scoped.lake_home / "warehouse" / f"{scoped.schema}_staging.db" / "stg_records__changes"
    )
    keys = Counter(line_keys(staged_changes))
    assert set(keys.values()) == {1}
    landed = scoped_lake.second_wave.landed
    assert set(keys) == {key for key in landed if key[0].startswith("records/")}


def test_the_staging_data_tests_pass_on_lines_staged_in_micro_batches(
    scoped_lake: ScopedLake,
) -> None:
    """The data tests of the staging models and of what they read (a line staged once, its
    columns set, its tenant known), on every line of both waves: the lake's runs leave the
    tests out."""
    scoped = scoped_lake.lake
    run_dbt(
        ["test", "--select", "+path:models/staging"],
        env=scoped.env(),
        target_path=scoped.target_path(),
    )


def test_records_equal_the_in_order_fold_of_the_landed_lines(
    scoped_lake: ScopedLake, waves: Waves
) -> None:
    """Every good records line of both waves but the erased person's, folded in order by the
    pure reference."""
    landing = scoped_lake.lake.landing
    erased = erased_line_keys(landing, "records", {(ERASED_TENANT, ERASED_IDENTITY)})
    assert len(erased) == 2
    messages = good_messages(landing, "records", waves.bad | erased)
    records = read_delta(scoped_lake.table_path("records"), ["tenant_id", "record_id", "payload"])
    found = {
        (row["tenant_id"], row["record_id"]): json.loads(row["payload"])
        for row in records.to_pylist()
    }
    assert found and found == expected_records(messages)


def test_notifications_are_unique_and_cover_both_waves(scoped_lake: ScopedLake) -> None:
    """The second wave updates and deletes records of the first."""
    notifications = read_delta(scoped_lake.table_path("record_notifications"))
    keys = Counter(
        zip(
            *(
                notifications[column].to_pylist()
                for column in ("tenant_id", "record_id", "records_version", "change_type")
            ),
            strict=True,
        )
    )
    assert max(keys.values()) == 1
    change_types = Counter(key[3] for key in keys)
    assert change_types["insert"] and change_types["update"] and change_types["delete"]


def test_a_full_refresh_cannot_be_limited_to_some_tenants(
    scoped_lake: ScopedLake, spark, rows, capsys
) -> None:
    """It would rebuild each incremental table with those tenants' rows only: the run stops
    before its ingest drops the landing tables, naming the tenants, and changes nothing."""
    scoped = scoped_lake.lake
    tables = [f"{scoped.schema}.records", f"{scoped.schema}_landing.records"]
    versions = {table: latest_version(spark, table) for table in tables}
    capsys.readouterr()
    run = run_dbt(
        ["build", "--full-refresh", "--select", "records", "--vars", "{tenants: [acme]}"],
        env=scoped.env(),
        target_path=scoped.target_path(),
        expect_pass=False,
    )
    text = run.messages() + capsys.readouterr().out
    assert "--full-refresh rebuilds every tenant's rows" in text, text[-3000:]
    assert "cannot be limited to var tenants (acme)" in text
    assert {table: latest_version(spark, table) for table in tables} == versions
    assert tenants_of(rows, f"{scoped.schema}.records") == {"acme", "globex"}


def test_deleting_superseded_states_changes_no_result(scoped_lake: ScopedLake, spark, rows) -> None:
    """Runs append records' new versions to int_record_states; delete_superseded_states keeps
    only each record's newest, and the next run finds nothing to do: its ingest, the first
    since the micro-batches of the second wave, stages no line again. Last in this module: it
    changes the scoped lake's int_record_states (records, which the killed lake's are compared
    with, stays as it was)."""
    scoped = scoped_lake.lake
    states = f"{scoped.schema}_intermediate.int_record_states"
    records = f"{scoped.schema}.records"
    newest = f"""
        select tenant_id, record_id, last_ingest_batch_id, payload, is_deleted, state_json
        from (
            select *, row_number() over (
                partition by tenant_id, record_id order by last_ingest_batch_id desc) as rank
            from {states}
        ) where rank = 1
    """
    before = Counter(tuple(row.values()) for row in rows(newest))
    stored = rows(f"select count(*) as versions from {states}")[0]["versions"]
    assert stored > len(before), "the waves should have appended second versions of records"

    run = run_dbt(
        ["run-operation", "delete_superseded_states"],
        env=scoped.env(),
        target_path=scoped.target_path(),
    )
    assert run.success
    assert rows(f"select count(*) as versions from {states}")[0]["versions"] == len(before)
    assert Counter(tuple(row.values()) for row in rows(newest)) == before

    versions = {table: latest_version(spark, table) for table in (states, records)}
    scoped_run = ["run", "--select", "int_record_states", "records"]
    run_dbt(scoped_run, env=scoped.env(), target_path=scoped.target_path())
    assert {table: latest_version(spark, table) for table in (states, records)} == versions
    staged = staged_lines(scoped.lake_home / "warehouse", scoped.schema)
    assert staged == landed_lines(scoped.landing)
