"""Appends to the landing (staged lines) tables never conflict with the stage that reads them:
while a build of the models that read `<schema>_landing.records` or lead from it to records
runs in this thread, another thread keeps appending well-formed staged lines to that table
(blind Delta appends, the way the ingest writes). Neither fails, and the next build picks up
every appended line and passes those models' data tests on every row."""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from profile_lake.generator.config import GeneratorConfig
from profile_lake.generator.core import generate
from profile_lake.ingest.staging import stage_lines
from profile_lake.project import project_var
from pytests.support.dbt_runner import DbtInvocationError, run_dbt

pytestmark = pytest.mark.integration

SCHEMA = "concurrent_append"
LINES_PER_APPEND = 25
MAX_APPENDS = 40


def appended_file(index: int) -> tuple[str, list[str]]:
    """A landing file that never existed: its name and its (good) record lines."""
    name = f"records/appended-{index:03d}.jsonl"
    lines = [
        json.dumps(
            {
                "tenant_id": "acme",
                "record_id": f"appended-{index:03d}-{number:02d}",
                "op": "upsert",
                "event_ts": "2025-06-01T12:00:00Z",
                "seq": number,
                "record_type": "profile",
                "primary_id": f"email:appended-{index}-{number}@example.com",
                "payload": {"append": index, "line": number},
            }
        )
        for number in range(LINES_PER_APPEND)
    ]
    return name, lines


class Appender(threading.Thread):
    """Appends one staged file per round to the records landing table until stopped."""

    def __init__(self, spark: SparkSession, landing: Path, first_batch_id: int) -> None:
        super().__init__(name="landing-appender", daemon=True)
        self.spark = spark
        self.landing = landing
        self.next_batch_id = first_batch_id
        self.stop = threading.Event()
        self.appended: list[tuple[str, int, float]] = []  # (file, lines, when committed)
        self.error: BaseException | None = None

    def append_one(self) -> None:
        index = len(self.appended)
        name, lines = appended_file(index)
        content = ("\n".join(lines) + "\n").encode()
        files = self.spark.createDataFrame(
            [(f"file:{self.landing}/{name}", bytearray(content))], "path string, content binary"
        )
        staged = stage_lines(
            files,
            str(self.landing),
            self.next_batch_id,
            datetime.now(UTC),
            str(project_var("tenant_id_pattern")),
        )
        staged.drop("stream").write.format("delta").mode("append").saveAsTable(
            f"{SCHEMA}_landing.records"
        )
        self.next_batch_id += 1
        self.appended.append((name, len(lines), time.monotonic()))

    def run(self) -> None:
        try:
            while not self.stop.is_set() and len(self.appended) < MAX_APPENDS:
                self.append_one()
                self.stop.wait(0.5)
        except BaseException as error:  # reported by the test
            self.error = error


def dbt_outcome(args: list[str], env: dict[str, str], target: Path) -> str:
    """'' when `dbt <args>` succeeds (every node, every test), else what failed."""
    try:
        run_dbt(args, env=env, target_path=target)
    except DbtInvocationError as error:
        return str(error)
    return ""


@pytest.fixture(scope="module")
def lake(spark, lake_home: Path, tmp_path_factory) -> dict:
    landing = tmp_path_factory.mktemp("concurrent-landing")
    generate(
        GeneratorConfig(
            out=landing, seed=41, tenants=2, records_per_tenant=20, lines_per_file=60, quiet=True
        )
    )
    env = {"PROFILE_LAKE_SCHEMA": SCHEMA, "PROFILE_LAKE_LANDING": str(landing)}
    target = lake_home / "target" / SCHEMA
    # what the models after stg_records__changes read besides it; the landing tables come
    # from the ingest that starts every build
    upstream = ["--select", "@stg_records__changes"]
    skipped = ["--exclude", "stg_records__changes+", "resource_type:test"]
    run_dbt(["build", *upstream, *skipped], env=env, target_path=target)
    newest = spark.sql(f"select max(ingest_batch_id) from {SCHEMA}_landing.records").first()[0]

    appender = Appender(spark, landing, first_batch_id=newest + 1)
    appender.append_one()  # so the build has new lines to stage as it starts
    appender.start()
    # the models that read the landing table or lead from it to records (which the tests
    # read); the marts downstream and the data tests are left out: the next build runs those
    # models' data tests on every row, the lines this build staged included
    racing = ["stg_records__changes", "int_tenant_batches", "int_record_states", "records"]
    started = time.monotonic()
    try:
        build = dbt_outcome(
            ["build", "--select", *racing, "--exclude", "resource_type:test"], env, target
        )
    finally:
        ended = time.monotonic()
        appender.stop.set()
        appender.join(timeout=120)
    second = dbt_outcome(
        ["build", "--select", *racing, "--vars", "{full_checks: true}"], env, target
    )
    return {
        "appender": appender,
        "build": build,
        "second": second,
        "during": [item for item in appender.appended if started < item[2] < ended],
    }


def test_appends_and_the_build_both_succeed(lake) -> None:
    assert lake["appender"].error is None, repr(lake["appender"].error)
    assert len(lake["during"]) >= 2, "appends committed while the build ran"
    assert lake["build"] == ""


def test_the_next_build_picks_up_every_appended_line(lake, rows) -> None:
    assert lake["second"] == ""
    appended = {(name, number) for name, lines, _ in lake["appender"].appended
                for number in range(1, lines + 1)}  # fmt: skip
    staged = rows(
        f"select source_file, line_number, is_accepted from {SCHEMA}_staging.stg_records__changes"
        " where source_file like 'records/appended-%'"
    )
    keys = [(row["source_file"], row["line_number"]) for row in staged]
    assert len(keys) == len(set(keys)), "each appended line staged once"
    assert set(keys) == appended
    assert all(row["is_accepted"] for row in staged)
    records = {
        row["record_id"]
        for row in rows(f"select record_id from {SCHEMA}.records where record_id like 'appended-%'")
    }
    assert len(records) == len(appended)
