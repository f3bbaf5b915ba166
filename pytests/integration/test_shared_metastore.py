"""The `shared` target: the Hive metastore in PostgreSQL, so several dbt processes use one lake
at the same time (the `local` target's embedded Derby admits one process per lake).

On a throwaway PostgreSQL server with an empty database, in a lake of their own: one `dbt seed`
creates the metastore's schema and a seed table; then two dbt processes start together, each
with its own JVM, SparkSession and metastore client: one reads the first process's table
(`dbt show`), the other creates another (`dbt seed`). PostgreSQL sees both clients connected at
the same moment, and the metastore then holds both tables.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from profile_lake.delta_reader import read_delta
from profile_lake.testing.dbt_subprocess import DbtOutcome, DbtSubprocess, RunningDbt, expect
from profile_lake.testing.postgres import PostgresConnection

pytestmark = pytest.mark.integration

SCHEMA = "shared_metastore"
TENANTS_SEED_ROWS = 8
POLL_S = 0.2


def metastore_tables(metastore: PostgresConnection, schema: str) -> set[str]:
    """The tables the metastore lists in `schema`, read from its own PostgreSQL tables."""
    rows = metastore.query(
        'select t."TBL_NAME" from "TBLS" t join "DBS" d on d."DB_ID" = t."DB_ID" '
        'where d."NAME" = %s',
        [schema],
    )
    return {name for (name,) in rows}


def connected_clients(metastore: PostgresConnection) -> set[str]:
    """Application names of the clients connected to the metastore database right now."""
    rows = metastore.query(
        "select distinct application_name from pg_stat_activity where datname = %s",
        [metastore.database],
    )
    return {name for (name,) in rows if name}


def shown_rows(outcome: DbtOutcome) -> list[dict]:
    """The rows `dbt show --output json` printed (the last JSON object of its output)."""
    output = outcome.output()
    start = output.rindex('{\n  "show"')
    return json.loads(output[start : output.index("\n}", start) + 2])["show"]


def wait_for_both(
    metastore: PostgresConnection, runs: dict[str, RunningDbt]
) -> tuple[bool, dict[str, DbtOutcome]]:
    """Wait for every run; whether all of them were connected to the metastore at once."""
    all_connected = False
    while [run for run in runs.values() if run.poll() is None]:  # polls each (notes its end)
        all_connected = all_connected or set(runs) <= connected_clients(metastore)
        time.sleep(POLL_S)
    return all_connected, {client: run.wait() for client, run in runs.items()}


def test_two_dbt_processes_share_the_metastore(
    postgres_metastore: PostgresConnection, tmp_path: Path
) -> None:
    def lake(client: str) -> DbtSubprocess:
        """The shared lake, as seen by one process: `client` is its name in PostgreSQL."""
        metastore = postgres_metastore.with_application_name(client)
        return DbtSubprocess(
            tmp_path / "lake",
            target="shared",
            env={**metastore.metastore_env(), "PROFILE_LAKE_SCHEMA": SCHEMA},
        )

    first = lake("first").run(["seed", "--select", "tenants"])
    assert metastore_tables(postgres_metastore, SCHEMA) == {"tenants"}

    started = time.monotonic()
    runs = {
        "reader": lake("reader").start(
            [
                "show",
                *("--inline", "select count(*) as tenants from {{ ref('tenants') }}"),
                *("--output", "json"),
            ]
        ),
        "writer": lake("writer").start(["seed", "--select", "segments"]),
    }
    all_connected, outcomes = wait_for_both(postgres_metastore, runs)
    together_s = time.monotonic() - started
    for outcome in outcomes.values():
        expect(outcome)

    assert all_connected, "the two processes never used the metastore at the same time"
    assert shown_rows(outcomes["reader"]) == [{"tenants": TENANTS_SEED_ROWS}]
    assert metastore_tables(postgres_metastore, SCHEMA) == {"tenants", "segments"}
    # The tables live in the lake's warehouse, whichever process wrote them.
    warehouse = tmp_path / "lake" / "warehouse" / f"{SCHEMA}.db"
    assert read_delta(warehouse / "tenants").num_rows == TENANTS_SEED_ROWS
    assert read_delta(warehouse / "segments").num_rows > 0

    print(
        f"\nshared metastore: first dbt seed (metastore schema created) {first.seconds:.0f}s; "
        f"dbt show and dbt seed together {together_s:.0f}s "
        f"({', '.join(f'{name} {o.seconds:.0f}s' for name, o in outcomes.items())})"
    )
