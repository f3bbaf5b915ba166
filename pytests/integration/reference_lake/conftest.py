"""The lakes of this folder's modules land the same two generated waves
(pytests/support/two_waves.py) in different runs, and must end in the same tables: the scoped
lake, built here, in uninterrupted in-process runs scoped to some tenants, the second wave in
micro-batches of one file (test_scoped_and_batched_runs.py); the killed lake in `dbt build`
subprocesses killed at chosen points (test_build_fault_injection.py). The folder is one xdist
group (SHARED_LAKE_FOLDERS in pytests/conftest.py), so one worker builds the scoped lake once for
both modules."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytests.support.landing import ingest_batches, landed_lines, staged_lines
from pytests.support.scoped_lake import Lake
from pytests.support.two_waves import SELECTION, Waves, generate_waves

ONE_FILE_PER_BATCH = ["--vars", "{ingest_max_files_per_batch: 1}"]


@dataclass(frozen=True)
class Ingested:
    """The lines landed and how many times each is in the landing tables, at one moment."""

    landed: Counter
    staged: Counter
    batches: int  # ingest micro-batches that staged lines


@dataclass(frozen=True)
class ScopedLake:
    """The scoped lake after its last run, and what was read of it on the way."""

    lake: Lake
    after_acme: dict[str, set]
    after_globex: dict[str, set]
    first_run: Ingested  # wave 1, after the run that staged it (scoped to globex)
    no_new_file: Ingested  # wave 1, after acme's and globex's runs, which found no new file
    second_wave: Ingested  # after the run for every tenant, one file per micro-batch

    def table_path(self, table: str) -> Path:
        """A mart's folder, for reading it with deltalake."""
        return self.lake.lake_home / "warehouse" / f"{self.lake.schema}.db" / table


def tenants_of(rows: Callable[[str], list[dict]], table: str, column: str = "tenant_id") -> set:
    return {row[column] for row in rows(f"select distinct {column} from {table}")}


@pytest.fixture(scope="session")
def waves(tmp_path_factory) -> Waves:
    return generate_waves(tmp_path_factory.mktemp("waves"))


@pytest.fixture(scope="session")
def scoped_lake(spark, lake_home: Path, tmp_path_factory, rows, waves: Waves) -> ScopedLake:
    """Wave 1: globex's lines staged, a run for acme (which leaves them be), a run for globex
    (whose lines sit in the same ingest batch acme's watermark has already passed); then wave 2
    and a run for every tenant whose ingest takes one file per micro-batch."""
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
    return ScopedLake(scoped, after_acme, after_globex, first_run, no_new_file, ingested())
