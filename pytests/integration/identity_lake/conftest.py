"""The identity lake: renames, components, incremental resolution and linking rules on one lake
(schema `identity`), built once per test session (pytests/conftest.py gives this folder one
worker). It is built from hand-made landing files by a copy of the project whose seeds are the
scenarios' union: the tenants seed is the repository's, the increments scenario's copies of six
of its tenants and the rules scenario's tenants; the identity_rules seed has the rules
scenario's rows only, so no other tenant has a rule. No scenario reads another's tenants:

* the identity scenario (identity_landings.py), one case per tenant of the repository's seed;
* the increments scenario (identity_landings.py), on the `inc_` copies;
* the linking rules scenario (rules_landings.py), one case per tenant, with shuffled copies
  of two of them.

Its runs, in order:

1. a build without data tests of what the tests read (the graph, the marts of profiles, the
   rules' tables, the names snapshot; the monitoring and observability models are left to the
   whole build of run 9): every scenario's first files (the shuffled copies' first part);
2. the same on every scenario's second files (the shuffled copies' second part), on the
   distributed paths (graph, with and without rules, and renames; every later run takes the
   fast paths and folds renames in the driver) and with identity_index files of 4 rows;
3. the graph of inc_acme and inc_globex only (`--vars {tenants: ...}`), on the increments'
   third files;
4. the graph and the rules' tables (the cut links, the connections) of every tenant, after a
   rules change (collapse_plain gets a rule, crm_limited loses its own) and with a new record
   of mixed: the increments' run 3 and the rules' run after a change;
5. the graph again, with nothing new;
6. a build on a bad rules row, which stops at on-run-start before any node; the seed is put
   back as run 4 left it, so no later run sees a rules change;
7. a full refresh of the graph and its tables: int_profile_identities_resolved,
   profile_identities, identity_link_exclusions, int_identity_connections and identity_index
   (files of 4 rows, laid out again by the full build);
8. a quiet month: the graph of inc_acme only on a new record, then every commit of records
   dated a month back;
9. one whole `dbt build`, every model and data test on every row (`full_checks`), on inc_acme's
   last record.

The fixture records what the tests read when the run it is about ends (`IdentityLake`); the
tests that read the lake itself read what no run after the last changes (names history, the
index through the lookup command, the summary) or run what changes nothing (run-operations).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable

from profile_lake.delta_reader import read_delta
from profile_lake.project import PROJECT_DIR
from pytests.integration.identity_lake import identity_landings as identity
from pytests.integration.identity_lake import rules_landings as rules
from pytests.support.dbt_runner import environment
from pytests.support.delta_commits import date_commits_back, table_location
from pytests.support.landing import write_landing
from pytests.support.project_copy import project_copy

SCHEMA = "identity"
# what the tests read after runs 1 and 2: the graph, the marts of profiles, the rules' tables,
# and the names snapshot (its history needs both runs)
READ_MODELS = [
    "--select",
    "+profile_segments",
    "+identity_index",
    "+identity_link_exclusions",
    "+int_identity_connections",
    "+entity_names_snapshot",
    "--exclude",
    "resource_type:test",
]
# build, not run: the seeds are upstream
GRAPH = ["--select", "+profile_identities", "--exclude", "resource_type:test"]
# and the tables the rules scenario reads: the cut links and the connections kept run by run
RULED_GRAPH = [
    "--select",
    "+profile_identities",
    "+identity_link_exclusions",
    "+int_identity_connections",
    "--exclude",
    "resource_type:test",
]
# the distributed paths of the graph (with and without rules) and of the renames
DISTRIBUTED = {"PROFILE_LAKE_FAST_PATH_MAX_LINKS": "0", "PROFILE_LAKE_RENAMES_DRIVER_MAX_ROWS": "0"}
TINY_INDEX_FILES = ["--vars", "{identity_index_rows_per_file: 4}"]
FULL_REFRESH = [
    "int_profile_identities_resolved",
    "profile_identities",
    "identity_link_exclusions",
    "int_identity_connections",
    "identity_index",
]


@dataclass
class IdentityLake:
    """The lake after its last run, and what was read of it when the run it is about ended."""

    lake: Any  # a BuiltLake (pytests/integration/conftest.py), built by the first run
    # the identity scenario's tables (its tenants' rows) after runs 1 and 2 (`snapshot`)
    first: dict = field(default_factory=dict)
    second: dict = field(default_factory=dict)
    # the distributed path's first contraction pass, checkpointed in run 2
    contractions: list[Path] = field(default_factory=list)
    # int_profile_identities_resolved, every tenant's rows and its version (`resolution_state`),
    # after runs 1, 2, "3_scoped" (run 3), 3 (run 4), "no_change" (5), "full_refresh" (7) and
    # "quiet_month" (9)
    increments: dict = field(default_factory=dict)
    # identity_index as its full build (run 7) laid it out: each file's path and min/max
    # statistics (Delta's add actions), and each row's tenant_id
    index_files: dict[str, list] = field(default_factory=dict)
    index_tenants: list[str] = field(default_factory=list)
    # the rules scenario: 1 and 2, profiles and cut links after runs 1 and 2; "rules_changed"
    # (run 4), "bad_rules" (6), "full_refresh" (7), "whole_build" (9)
    rules: dict = field(default_factory=dict)


def tenants_seed() -> str:
    """The repository's tenants seed, the increments tenants' copies and the rules tenants."""
    header, *rows = (PROJECT_DIR / "seeds" / "tenants.csv").read_text().splitlines()
    copies = identity.increments_tenant_rows(rows)
    return "\n".join([header, *rows, *copies, *rules.tenant_rows()]) + "\n"


def write_rules(project: Path, rows: list[tuple[str, str, str, str]]) -> None:
    (project / "seeds" / "identity_rules.csv").write_text(rules.rules_seed(rows))


@pytest.fixture(scope="session")
def identity_lake(spark, lake_home: Path, lake_builder, tmp_path_factory) -> IdentityLake:
    root = tmp_path_factory.mktemp("identity-lake")
    project = project_copy(
        root, {"tenants.csv": tenants_seed(), "identity_rules.csv": rules.rules_seed(rules.RULES)}
    )
    landing = root / "landing"
    mixed = rules.mixed_messages()
    shuffled = rules.shuffled_parts(
        {k: rules.RUN_1[k] + rules.RUN_2[k] + mixed[k] for k in rules.RUN_1}, parts=2
    )

    # 1. every scenario's first files; the data tests run once, on every row, in the whole
    # build that ends the story: checking an earlier run's tables too would scan most of the
    # same rows twice; the models no test reads before then are built there too
    write_landing(landing, identity.RUN_1, "part-00001")
    write_landing(landing, identity.INCREMENTAL_RUNS[0], "increments-00001")
    write_landing(landing, {k: rules.RUN_1[k] + mixed[k] for k in rules.RUN_1}, "rules-00001")
    write_landing(landing, shuffled[0], "shuffled-00001")
    lake = lake_builder(
        lake_home, SCHEMA, landing, project_dir=project, build_args=["build", *READ_MODELS]
    )
    story = IdentityLake(lake)
    story.first = snapshot(spark, lake)
    story.increments[1] = resolution_state(spark, lake)
    story.rules[1] = rules_state(spark, lake)

    # 2. every scenario's second files, on the distributed paths, with a tiny index file size
    write_landing(landing, identity.RUN_2, "part-00002")
    write_landing(landing, identity.INCREMENTAL_RUNS[1], "increments-00002")
    write_landing(landing, rules.RUN_2, "rules-00002")
    write_landing(landing, shuffled[1], "shuffled-00002")
    with environment(DISTRIBUTED):
        lake.dbt(["build", *READ_MODELS, *TINY_INDEX_FILES])
    story.second = snapshot(spark, lake)
    story.increments[2] = resolution_state(spark, lake)
    story.rules[2] = rules_state(spark, lake)
    # one checkpoint folder per tenant scope, `ruled/` under it for the tenants with rules
    checkpoints = lake.lake_home / "checkpoints" / "identity_graph" / f"{lake.schema}_intermediate"
    story.contractions = [
        *checkpoints.glob("all/run-*/contraction-0"),
        *checkpoints.glob("all/ruled/run-*/contraction-0"),
    ]

    # 3. the increments' third files, two of their tenants first
    write_landing(landing, identity.INCREMENTAL_RUNS[2], "increments-00003")
    lake.dbt(["build", *GRAPH, "--vars", "{tenants: [inc_acme, inc_globex]}"])
    story.increments["3_scoped"] = resolution_state(spark, lake)

    # 4. every tenant, after a rules change and with a new record of mixed
    write_rules(project, rules.CHANGED_RULES)
    write_landing(landing, rules.RULES_CHANGE_RUN, "rules-00003")
    lake.dbt(["build", *RULED_GRAPH])
    story.increments[3] = resolution_state(spark, lake)
    story.rules["rules_changed"] = {
        **rules_state(spark, lake),
        "stamps_before": stamps(story.increments["3_scoped"]),
        "resolved": stamps(story.increments[3]),
    }

    # 5. nothing new
    lake.dbt(["build", *GRAPH])
    story.increments["no_change"] = resolution_state(spark, lake)

    # 6. a bad rules row; then the seed as run 4 left it
    write_rules(project, [*rules.CHANGED_RULES, rules.BAD_RULE])
    records_version = table_version(spark, lake.table("records"))
    failed = lake.dbt(["build", *RULED_GRAPH], expect_pass=False)
    story.rules["bad_rules"] = {
        "messages": failed.messages(),
        "statuses": failed.statuses(),
        "records_version_unchanged": table_version(spark, lake.table("records")) == records_version,
    }
    write_rules(project, rules.CHANGED_RULES)

    # 7. the graph and its tables from scratch (the marts after them recompute every key in the
    # next build that reaches them: the tables they read were replaced); the index laid out
    # again, in files of 4 rows
    kept = {"exclusions": exclusions(spark, lake), "connections": connections(spark, lake)}
    lake.dbt(["run", "--full-refresh", "--select", *FULL_REFRESH, *TINY_INDEX_FILES])
    story.increments["full_refresh"] = resolution_state(spark, lake)
    story.rules["full_refresh"] = {
        "kept": kept,
        "refreshed": {
            "exclusions": exclusions(spark, lake),
            "connections": connections(spark, lake),
        },
    }
    index = lake.table_path("identity_index")
    story.index_files = pa.table(DeltaTable(str(index)).get_add_actions(flatten=True)).to_pydict()
    story.index_tenants = read_delta(index, ["tenant_id"])["tenant_id"].to_pylist()

    # 8. a quiet month for every tenant but inc_acme, which changes in a run of its own; every
    # commit of records is dated back
    write_landing(landing, identity.QUIET_MONTH_RUNS[0], "increments-quiet-1")
    lake.dbt(["build", *GRAPH, "--vars", "{tenants: [inc_acme]}"])
    date_commits_back(table_location(spark, lake.table("records")), 30)

    # 9. inc_acme changes again, in a user's run: one whole build, every model and data test on
    # every row of every scenario
    write_landing(landing, identity.QUIET_MONTH_RUNS[1], "increments-quiet-2")
    whole = lake.dbt(["build", "--vars", "{full_checks: true}"])
    story.increments["quiet_month"] = resolution_state(spark, lake)
    story.rules["whole_build"] = {
        "statuses": whole.statuses(),
        "profiles": profile_rows(spark, lake),
    }
    return story


# ---------- what the fixture reads


def snapshot(spark, lake) -> dict:
    """The identity scenario's tables (its tenants' rows) as the last run left them."""

    def rows(table: str) -> list[dict]:
        found = spark.table(lake.table(table)).collect()
        return [
            row.asDict(recursive=True)
            for row in found
            if row["tenant_id"] in identity.IDENTITY_TENANTS
        ]

    return {
        "identity_map": {
            (row["tenant_id"], row["identity_id"]): row["canonical_id"]
            for row in rows("identity_map")
        },
        "profile_identities": {
            (row["tenant_id"], row["identity_id"]): row["profile_id"]
            for row in rows("profile_identities")
        },
        "profiles": {(row["tenant_id"], row["profile_id"]): row for row in rows("profiles")},
        "segments": {
            (row["tenant_id"], row["profile_id"]): row["segment_ids"]
            for row in rows("profile_segments")
        },
        "index": {
            (row["tenant_id"], row["identity_id"]): row["profile_id"]
            for row in rows("identity_index")
        },
        "records": {(row["tenant_id"], row["record_id"]): row for row in rows("records")},
        "resolved": {
            key: value
            for key, value in resolved_rows(spark, lake).items()
            if key[0] in identity.IDENTITY_TENANTS
        },
        "records_version": table_version(spark, lake.table("records")),
    }


def resolved_rows(spark, lake) -> dict[tuple[str, str], tuple[str, int, int]]:
    """int_profile_identities_resolved: key -> (profile_id, records_version,
    identity_map_version)."""
    table = lake.table("int_profile_identities_resolved", "intermediate")
    return {
        (row["tenant_id"], row["identity_id"]): (
            row["profile_id"],
            row["records_version"],
            row["identity_map_version"],
        )
        for row in spark.table(table).collect()
    }


def table_version(spark, table: str) -> int:
    return spark.sql(f"describe history {table} limit 1").first()["version"]


def resolution_state(spark, lake) -> dict:
    """int_profile_identities_resolved now, every tenant's rows, and its table version."""
    table = lake.table("int_profile_identities_resolved", "intermediate")
    return {"resolved": resolved_rows(spark, lake), "version": table_version(spark, table)}


def stamps(state: dict) -> dict[tuple[str, str], int]:
    """Each resolved row's records_version (the run that last resolved it), of a
    resolution_state."""
    return {key: records_version for key, (_, records_version, _) in state["resolved"].items()}


def rules_state(spark, lake) -> dict:
    return {"profiles": profiles(spark, lake), "exclusions": exclusions(spark, lake)}


def profiles(spark, lake) -> dict[tuple[str, str], str]:
    return {
        (row["tenant_id"], row["identity_id"]): row["profile_id"]
        for row in spark.table(lake.table("profile_identities")).collect()
    }


def exclusions(spark, lake) -> dict[tuple[str, str, str], tuple]:
    return {
        (row["tenant_id"], row["smaller_identity_id"], row["larger_identity_id"]): (
            row["rule"],
            row["namespace"],
            row["event_ts"].replace(tzinfo=UTC),
            row["record_id"],
        )
        for row in spark.table(lake.table("identity_link_exclusions")).collect()
    }


def connections(spark, lake) -> dict[tuple[str, str], tuple[int, int]]:
    table = lake.table("int_identity_connections", "intermediate")
    return {
        (row["tenant_id"], row["identity_id"]): (row["linked_identities"], row["record_count"])
        for row in spark.table(table).collect()
    }


def profile_rows(spark, lake) -> dict[tuple[str, str], dict]:
    return {
        (row["tenant_id"], row["profile_id"]): row.asDict()
        for row in spark.table(lake.table("profiles")).collect()
    }
