"""Bounded files on a real Delta table, in dbt-spark's functional-test style: an incremental
model written by many small runs keeps each partition under its limit of small files (the
project's post-hook `compact_written_table`), Z-ordered by the model's `zorder_by`, and holds
the rows of the runs folded in order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from dbt.tests.util import run_dbt

from profile_lake.compaction import small_file_counts
from profile_lake.delta_log import live_data_files
from pytests.support.dbt_functional import MERGE_MACRO_FILES, delta_project, spark, table_name
from pytests.support.dbt_runner import PROJECT_DIR

pytestmark = pytest.mark.integration

MACRO_FILES = [
    *MERGE_MACRO_FILES,
    PROJECT_DIR / "macros" / "maintenance" / "compact_written_table.sql",
    PROJECT_DIR / "macros" / "incremental" / "run_tenant_scope.sql",
]
LIMIT = 3
RUNS = 5

# Run b inserts three keys into each tenant and updates acme's key 0: every run adds a small
# file to each partition (a MERGE that only inserts into a partition rewrites none of its files).
events_sql = """
{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key=['tenant_id', 'id'],
        partition_by=['tenant_id'],
        zorder_by=['id'],
        tblproperties={'delta.enableDeletionVectors': 'true'},
    )
}}

{%- set run = var('run') %}
select tenant_id, id, concat('name-', id, '-', {{ run }}) as name
from (values ('acme'), ('globex')) as tenants (tenant_id)
cross join (
    select {{ run }} * 10 + offset as id from (values (0), (1), (2)) as offsets (offset)
    union all
    select 0 as id
) as ids
where id != 0 or tenant_id = 'acme'
"""


def expected_rows(runs: int) -> list[tuple[str, int, str]]:
    found: dict[tuple[str, int], str] = {}
    for run in range(1, runs + 1):
        for tenant in ("acme", "globex"):
            for offset in range(3):
                found[(tenant, run * 10 + offset)] = f"name-{run * 10 + offset}-{run}"
        found[("acme", 0)] = f"name-0-{run}"
    return sorted((tenant, key, name) for (tenant, key), name in found.items())


def table_folder(table: str) -> Path:
    location = spark().sql(f"describe detail {table}").first()["location"]
    return Path(urlparse(location).path)


class TestBoundedFiles:
    @pytest.fixture(scope="class")
    @classmethod
    def models(cls) -> dict[str, str]:
        return {"events.sql": events_sql}

    @pytest.fixture(scope="class")
    @classmethod
    def project_config_update(cls) -> dict[str, Any]:
        project = delta_project("bounded_files")
        project["models"]["+post-hook"] = "{{ compact_written_table() }}"
        return project

    def test_many_small_runs_keep_each_partition_under_its_limit(self, project: Any) -> None:
        most_small_files = 0
        for run in range(1, RUNS + 1):
            variables = {"run": run, "compaction_max_small_files": LIMIT}
            run_dbt(["run", "--vars", json.dumps(variables)])
            table = table_name(project, "events")  # after a run: it sets up the adapter
            files = live_data_files(table_folder(table))
            assert files is not None
            counts = small_file_counts(files)
            assert set(counts) == {(("tenant_id", "acme"),), (("tenant_id", "globex"),)}
            assert max(counts.values()) < LIMIT, (run, counts)
            most_small_files = max(most_small_files, *counts.values())
        # each partition reached the limit less one file before its compaction
        assert most_small_files == LIMIT - 1

        rows = spark().table(table).collect()
        assert sorted(tuple(row) for row in rows) == expected_rows(RUNS)

        history = spark().sql(f"describe history {table}").collect()
        compactions = [row for row in history if row["operation"] == "OPTIMIZE"]
        assert compactions, "no compaction ran"
        for compaction in compactions:
            parameters = compaction["operationParameters"]
            assert json.loads(parameters["zOrderBy"]) == ["id"]
            assert "tenant_id" in parameters["predicate"]
