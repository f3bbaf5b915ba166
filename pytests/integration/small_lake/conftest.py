"""The small lake: three scenarios on one lake (schema `small_lake`), built once per test session
(pytests/conftest.py gives this folder one worker), so that their runs with new data coincide.
Each scenario has tenants and landing files of its own: run skipping umbrella and stark, the
backfill hooli (landings.py), the hostile corpus acme, globex and initech (hostile_corpus.py).

Its runs, in order:

1. the first build, whole and fresh, data tests, dbt's unit tests and the run history included,
   of run skipping's first files, the hostile corpus and half of the backfill's events (with a
   forged snapshot line);
2. the same build with nothing new (run skipping's idle build);
3. every model again (no data or unit tests: the first build and the last run them), with new
   records files only: run skipping's new record, the backfilled snapshot and the other half
   of the backfill's events;
4. a selection of the records pipeline without tests, on backfill lines that change no record
   and one new record;
5. a whole `dbt build --full-refresh`, tests included: test_hostile_input.py's last test, which
   replaces the tables the hostile tests read, so the lake ends with one whole build.

The fixture records what the run-skipping and backfill tests read, at the moment they need it;
the hostile tests read the lake itself (no run after the first lands a line of the corpus).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from profile_lake.migration.backfill import backfill
from pytests.integration.small_lake.hostile_corpus import LandingFile, landing_files, write_corpus
from pytests.integration.small_lake.landings import (
    AS_OF,
    BACKFILL_TENANT,
    FORGED,
    FRESH,
    RECORDS_SELECTION,
    SKIPPING_FIRST,
    SKIPPING_NEW_RECORDS,
    cdc_events,
    iso,
    legacy_snapshot,
    no_op_events,
    write_lines,
)
from pytests.support.dbt_runner import DbtRun
from pytests.support.landing import write_landing

SCHEMA = "small_lake"


@dataclass(frozen=True)
class TenantRows:
    """A tenant's rows of records, record_notifications and ingest_errors at one moment."""

    records: list[dict]
    notifications: list[dict]
    errors: list[dict]


@dataclass(frozen=True)
class SmallLake:
    """The lake after its fourth run, its runs' results, and what was read of it on the way."""

    lake: Any  # a BuiltLake (pytests/integration/conftest.py), built by the first run
    runs: dict[str, DbtRun]  # first, idle, new_records, no_ops
    # Delta version of each table of the lake's own schemas, before and after the idle run
    versions_before_idle: dict[str, int]
    versions_after_idle: dict[str, int]
    skipped_in_history: dict[str, str]  # node -> why run_node_history says it was skipped
    snapshot_rows: list[dict]  # the backfilled snapshot's good rows
    backfill_events: list[dict]  # the backfilled tenant's events, as they landed
    backfilled_before_no_ops: TenantRows  # after the third run
    backfilled_after_no_ops: TenantRows  # after the fourth

    def table(self, name: str, layer: str = "") -> str:
        return self.lake.table(name, layer)

    def dbt(self, args: list[str], expect_pass: bool = True) -> DbtRun:
        return self.lake.dbt(args, expect_pass=expect_pass)


def versions(spark, schemas: list[str]) -> dict[str, int]:
    found = {}
    for schema in schemas:
        views = {row["viewName"] for row in spark.sql(f"show views in {schema}").collect()}
        for row in spark.sql(f"show tables in {schema}").collect():
            if row["isTemporary"] or row["tableName"] in views:
                continue
            table = f"{schema}.{row['tableName']}"
            found[table] = spark.sql(f"describe history {table} limit 1").first()["version"]
    return found


def tenant_rows(rows: Callable[[str], list[dict]], lake: Any, tenant: str) -> TenantRows:
    where = f"where tenant_id = '{tenant}'"
    return TenantRows(
        rows(f"select * from {lake.table('records')} {where}"),
        rows(
            "select record_id, change_type, records_version "
            f"from {lake.table('record_notifications')} {where}"
        ),
        rows(f"select source_file, error_code from {lake.table('ingest_errors')} {where}"),
    )


@pytest.fixture(scope="session")
def hostile_corpus() -> list[LandingFile]:
    return landing_files("hostile")


@pytest.fixture(scope="session")
def small_lake(
    spark, lake_home: Path, lake_builder, rows, hostile_corpus, tmp_path_factory
) -> SmallLake:
    landing = tmp_path_factory.mktemp("small-lake-landing")
    snapshot = tmp_path_factory.mktemp("small-lake-snapshot")
    snapshot_rows = legacy_snapshot(snapshot)
    snapshot_ids = [row["record_id"] for row in snapshot_rows]
    events = cdc_events(snapshot_ids)
    schemas = [SCHEMA, f"{SCHEMA}_staging", f"{SCHEMA}_intermediate"]

    # 1. every scenario's first files; half of the backfill's events
    write_landing(landing, SKIPPING_FIRST, "skipping-1")
    write_corpus(landing, hostile_corpus)
    write_lines(landing / "records", "cdc-1.jsonl", [*events[: len(events) // 2], FORGED])
    lake = lake_builder(lake_home, SCHEMA, landing, unit_tests=True, run_history=True)
    versions_before_idle = versions(spark, schemas)

    # 2. nothing new
    idle = lake.dbt(["build"], unit_tests=True)
    versions_after_idle = versions(spark, schemas)

    # 3. new records files only: the backfill's snapshot and the other half of its events
    write_landing(landing, SKIPPING_NEW_RECORDS, "skipping-2")
    backfill(snapshot, landing, BACKFILL_TENANT, iso(AS_OF))
    write_lines(landing / "records", "cdc-2.jsonl", events[len(events) // 2 :])
    new_records = lake.dbt(["build", "--exclude", "resource_type:test"])
    skipped_in_history = {
        row["name"]: row["message"]
        for row in rows(
            f"select node_name as name, message from {lake.table('run_node_history')} "
            "where message like 'skipped:%'"
        )
    }
    backfilled_before_no_ops = tenant_rows(rows, lake, BACKFILL_TENANT)

    # 4. lines that change no record, and one new record
    no_ops = no_op_events(snapshot_ids, events)
    write_lines(landing / "records", "cdc-3.jsonl", [*no_ops, FRESH])
    no_op_run = lake.dbt(RECORDS_SELECTION)

    return SmallLake(
        lake=lake,
        runs={"first": lake.build, "idle": idle, "new_records": new_records, "no_ops": no_op_run},
        versions_before_idle=versions_before_idle,
        versions_after_idle=versions_after_idle,
        skipped_in_history=skipped_in_history,
        snapshot_rows=snapshot_rows,
        backfill_events=[*events, *no_ops, FRESH],
        backfilled_before_no_ops=backfilled_before_no_ops,
        backfilled_after_no_ops=tenant_rows(rows, lake, BACKFILL_TENANT),
    )
