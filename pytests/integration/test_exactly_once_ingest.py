"""Each landed file is ingested exactly once (SPEC.md section 2) across runs: files landed in
two rounds are each staged once, and a run with no new file stages nothing. Runs killed inside
the ingest, then run to completion, are test_build_fault_injection's: its killed lake shares
one `dbt build` subprocess lake with the kills inside the models.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from profile_lake.delta_reader import read_delta
from profile_lake.generator.config import GeneratorConfig
from profile_lake.generator.core import generate
from profile_lake.ingest.lines import STREAMS
from pytests.support.dbt_runner import run_dbt
from pytests.support.landing import landed_lines, line_keys, staged_lines

pytestmark = pytest.mark.integration

ONE_FILE_PER_BATCH = ["--vars", "{ingest_max_files_per_batch: 1}"]


def land(landing: Path, seed: int) -> None:
    """A small generated batch of landing files, beside those already there."""
    generate(
        GeneratorConfig(
            out=landing,
            seed=seed,
            tenants=2,
            records_per_tenant=30,
            renames_per_tenant=10,
            names_per_tenant=15,
            lines_per_file=40,
            bad_rate=0.05,
            gzip_every=4,
            quiet=True,
        )
    )


def ingest_batches(warehouse: Path, schema: str) -> int:
    """How many ingest micro-batches staged lines in the landing tables."""
    batches: set[int] = set()
    for stream in STREAMS:
        table = read_delta(warehouse / f"{schema}_landing.db" / stream)
        batches.update(table["ingest_batch_id"].to_pylist())
    return len(batches)


# ---------- (a) two rounds of files, each staged once


def test_files_landed_in_two_rounds_are_staged_once(spark, lake_home: Path, tmp_path) -> None:
    schema = "exactly_once_rounds"
    landing = tmp_path / "landing"
    env = {"PROFILE_LAKE_SCHEMA": schema, "PROFILE_LAKE_LANDING": str(landing)}
    target = lake_home / "target" / schema
    warehouse = lake_home / "warehouse"

    land(landing, seed=21)
    first_round = landed_lines(landing)
    run_dbt(["build", "--select", "+path:models/staging"], env=env, target_path=target)
    assert staged_lines(warehouse, schema) == first_round

    # the second round in micro-batches of one file each
    land(landing, seed=22)
    both_rounds = landed_lines(landing)
    assert len(both_rounds) > len(first_round)
    run_dbt(
        ["build", "--select", "+path:models/staging", *ONE_FILE_PER_BATCH],
        env=env,
        target_path=target,
    )
    assert staged_lines(warehouse, schema) == both_rounds
    second_round_files = {file for file, _ in both_rounds.keys() - first_round.keys()}
    assert len(second_round_files) > 1
    assert ingest_batches(warehouse, schema) == len(second_round_files) + 1

    # a run with no new file stages nothing
    run_dbt(["run", "--select", "stg_records__changes"], env=env, target_path=target)
    assert staged_lines(warehouse, schema) == both_rounds
    accepted = read_delta(warehouse / f"{schema}_staging.db" / "stg_records__changes")
    keys = Counter(line_keys(accepted))
    assert set(keys.values()) == {1}
    assert set(keys) == {key for key in both_rounds if key[0].startswith("records/")}
