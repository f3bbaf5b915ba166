"""Runs scoped to some tenants (var tenants) advance per-tenant watermarks independently, and
the ingest stages each landed file exactly once (SPEC.md section 2) however the runs batch the
files: interleaved scoped runs, the second wave in micro-batches of one file, end in the same
tables as one run per wave over every tenant (docs/locks.md).

The scoped lake lands the reference's two waves (pytests/support/two_waves.py): wave 1, globex's
lines staged, a run for acme (which leaves them be), a run for globex (whose lines sit in the
same ingest batch acme's watermark has already passed), then wave 2 and a run for every tenant
whose ingest takes one file per micro-batch. int_record_states folds all of a run's micro-batches
into one version per record, which records applies in one MERGE and record_notifications
notifies in one commit: the tables equal the reference's, ingest batch numbers aside.
Other scoped runs (tenants gone from records, quiet tenants, states left behind):
test_tenant_scoped_runs.py.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from profile_lake.delta_reader import read_delta
from pytests.support.dbt_runner import run_dbt
from pytests.support.landing import ingest_batches, landed_lines, line_keys, staged_lines
from pytests.support.scoped_lake import Lake, latest_version, table_rows
from pytests.support.two_waves import SELECTION, ReferenceLake, Waves

pytestmark = pytest.mark.integration

ONE_FILE_PER_BATCH = ["--vars", "{ingest_max_files_per_batch: 1}"]


@dataclass(frozen=True)
class Ingested:
    """The lines landed and how many times each is in the landing tables, at one moment."""

    landed: Counter
    staged: Counter
    batches: int  # ingest micro-batches that staged lines


@dataclass(frozen=True)
class Observed:
    after_acme: dict[str, set]
    after_globex: dict[str, set]
    first_run: Ingested  # wave 1, after the run that staged it (scoped to globex)
    no_new_file: Ingested  # wave 1, after acme's and globex's runs, which found no new file
    second_wave: Ingested  # after the run for every tenant, one file per micro-batch


def tenants_of(rows: Callable[[str], list[dict]], table: str, column: str = "tenant_id") -> set:
    return {row[column] for row in rows(f"select distinct {column} from {table}")}


@pytest.fixture(scope="module")
def lakes(
    spark, lake_home: Path, tmp_path_factory, rows, waves: Waves, reference: ReferenceLake
) -> tuple[Lake, ReferenceLake, Observed]:
    scoped = Lake("scoped_runs", tmp_path_factory.mktemp("scoped-landing"), lake_home, SELECTION)
    warehouse = lake_home / "warehouse"

    def seen() -> dict[str, set]:
        return {
            "staged": tenants_of(
                rows, f"{scoped.schema}_staging.stg_records__changes", "staged_tenant_id"
            ),
            "states": tenants_of(rows, f"{scoped.schema}_intermediate.int_record_states"),
            "records": tenants_of(rows, f"{scoped.schema}.records"),
            "notified": tenants_of(rows, f"{scoped.schema}.record_notifications"),
        }

    def ingested() -> Ingested:
        return Ingested(
            landed_lines(scoped.landing),
            staged_lines(warehouse, scoped.schema),
            ingest_batches(warehouse, scoped.schema),
        )

    waves.land(0, scoped.landing)
    # globex's lines staged first: the acme run must leave them for globex's own run
    scoped.build(
        ["globex"],
        ["--select", "tenants", "stg_records__changes", "--exclude", "resource_type:test"],
    )
    first_run = ingested()
    scoped.build(["acme"])
    after_acme = seen()
    scoped.build(["globex"])
    after_globex = seen()
    no_new_file = ingested()

    waves.land(1, scoped.landing)
    scoped.build(selection=[*SELECTION, *ONE_FILE_PER_BATCH])
    observed = Observed(after_acme, after_globex, first_run, no_new_file, ingested())
    return scoped, reference, observed


def test_a_scoped_run_touches_only_its_tenants(lakes) -> None:
    _, _, observed = lakes
    assert observed.after_acme == {
        "staged": {"acme", "globex"},
        "states": {"acme"},
        "records": {"acme"},
        "notified": {"acme"},
    }
    assert observed.after_globex == {
        "staged": {"acme", "globex"},
        "states": {"acme", "globex"},
        "records": {"acme", "globex"},
        "notified": {"acme", "globex"},
    }


def test_files_landed_in_two_waves_are_staged_once_in_micro_batches_of_one_file(lakes) -> None:
    """The first run, though scoped to globex, stages all of wave 1; the run for every tenant
    stages wave 2 one file per micro-batch, a gzipped file among them."""
    _, _, observed = lakes
    first, second = observed.first_run, observed.second_wave
    assert first.staged == first.landed
    assert second.staged == second.landed
    assert len(second.landed) > len(first.landed)
    second_wave_files = {file for file, _ in second.landed.keys() - first.landed.keys()}
    assert len(second_wave_files) > 1
    assert any(file.endswith(".gz") for file in second_wave_files), second_wave_files
    assert second.batches == len(second_wave_files) + 1


def test_a_run_with_no_new_file_stages_nothing(lakes) -> None:
    """acme's and globex's runs after wave 1 found no new file: the landing tables are as the
    first run left them. In the end each records line is in stg_records__changes once (globex's
    run found its lines staged already). test_deleting_superseded_states_changes_no_result
    checks a run with no new file after the micro-batches."""
    scoped, _, observed = lakes
    assert observed.no_new_file == observed.first_run
    staged_changes = read_delta(
        scoped.lake_home / "warehouse" / f"{scoped.schema}_staging.db" / "stg_records__changes"
    )
    keys = Counter(line_keys(staged_changes))
    assert set(keys.values()) == {1}
    landed = observed.second_wave.landed
    assert set(keys) == {key for key in landed if key[0].startswith("records/")}


def test_the_staging_data_tests_pass_on_lines_staged_in_micro_batches(lakes) -> None:
    """The data tests of the staging models and of what they read (a line staged once, its
    columns set, its tenant known), on every line of both waves: the lake's runs leave the
    tests out."""
    scoped, _, _ = lakes
    run_dbt(
        ["test", "--select", "+path:models/staging"],
        env=scoped.env(),
        target_path=scoped.target_path(),
    )


COMPARED = {
    "records": [
        "tenant_id",
        "record_id",
        "primary_id",
        "record_type",
        "related_ids",
        "payload",
        "event_ts",
    ],
    "record_notifications": ["tenant_id", "record_id", "change_type"],
    "ingest_errors": [
        "tenant_id",
        "stream",
        "source_file",
        "line_number",
        "error_code",
        "field",
    ],
    "ingest_file_accounting": [
        "stream",
        "source_file",
        "lines_landed",
        "lines_accepted",
        "lines_quarantined",
    ],
    "tenant_lag": ["tenant_id", "staged_lines_not_applied", "newest_applied_event_ts"],
}


@pytest.mark.parametrize("table", sorted(COMPARED))
def test_interleaved_scoped_runs_equal_runs_over_every_tenant(lakes, rows, table: str) -> None:
    """Ingest batch numbers left out: the second wave came in micro-batches here, in one batch
    in the reference."""
    scoped, reference, _ = lakes
    columns = COMPARED[table]
    found = table_rows(rows, f"{scoped.schema}.{table}", columns)
    assert found, f"{table} is empty"
    assert found == table_rows(rows, f"{reference.schema}.{table}", columns)


def test_notifications_are_unique_and_cover_both_waves(lakes, rows) -> None:
    scoped, _, _ = lakes
    keys = table_rows(
        rows,
        f"{scoped.schema}.record_notifications",
        ["tenant_id", "record_id", "records_version", "change_type"],
    )
    assert max(keys.values()) == 1
    change_types = {key[3] for key in keys}
    assert {"insert", "update"} <= change_types


def test_a_full_refresh_cannot_be_limited_to_some_tenants(lakes, spark, rows, capsys) -> None:
    """It would rebuild each incremental table with those tenants' rows only: the run stops
    before its ingest drops the landing tables, naming the tenants, and changes nothing."""
    scoped, _, _ = lakes
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


def test_deleting_superseded_states_changes_no_result(lakes, spark, rows) -> None:
    """Runs append records' new versions to int_record_states; delete_superseded_states keeps
    only each record's newest, and the next run finds nothing to do: its ingest, the first
    since the micro-batches of the second wave, stages no line again. Last in this module: it
    changes the scoped lake."""
    scoped, _, _ = lakes
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
