"""Runs scoped to some tenants (var tenants) advance per-tenant watermarks independently:
interleaved scoped runs end in the same tables as runs over every tenant (docs/locks.md).

The scoped lake: wave 1 landed, globex's lines staged, a run for acme (which leaves them be),
a run for globex (whose lines sit in the same ingest batches acme's watermark has already
passed), then wave 2 and a run for every tenant.
The reference lake: the same waves, each built for every tenant.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from profile_lake.generator.config import GeneratorConfig
from profile_lake.generator.core import generate
from pytests.support.dbt_runner import run_dbt
from pytests.support.delta_commits import date_commits_back, table_location

pytestmark = pytest.mark.integration

SELECTION = [
    "--select",
    "+record_notifications",
    "+ingest_errors",
    "+ingest_file_accounting",
    "+tenant_lag",
    "--exclude",
    "resource_type:test",
]
# builds records and what it reads, without notifying
RECORDS_ONLY = ["build", "--select", "+records", "--exclude", "resource_type:test"]
# records and its notifications: all that the vanished tenant's lake reads
NOTIFICATIONS_ONLY = ["--select", "+record_notifications", "--exclude", "resource_type:test"]
NO_TESTS = ["--exclude", "resource_type:test"]


def land(landing: Path, seed: int) -> None:
    generate(
        GeneratorConfig(
            out=landing,
            seed=seed,
            tenants=2,
            records_per_tenant=25,
            renames_per_tenant=4,
            names_per_tenant=4,
            lines_per_file=30,
            bad_rate=0.08,
            gzip_every=0,
            quiet=True,
        )
    )


@dataclass(frozen=True)
class Lake:
    schema: str
    landing: Path
    lake_home: Path
    selection: tuple[str, ...] = tuple(SELECTION)

    def env(self) -> dict[str, str]:
        return {"PROFILE_LAKE_SCHEMA": self.schema, "PROFILE_LAKE_LANDING": str(self.landing)}

    def target_path(self) -> Path:
        return self.lake_home / "target" / self.schema

    def build(self, tenants: list[str] | None = None, selection: list[str] | None = None) -> None:
        args = ["build", *(self.selection if selection is None else selection)]
        if tenants is not None:
            args += ["--vars", "{tenants: [" + ", ".join(tenants) + "]}"]
        run_dbt(args, env=self.env(), target_path=self.target_path())


@dataclass(frozen=True)
class Observed:
    after_acme: dict[str, set]
    after_globex: dict[str, set]


def tenants_of(rows: Callable[[str], list[dict]], table: str, column: str = "tenant_id") -> set:
    return {row[column] for row in rows(f"select distinct {column} from {table}")}


@pytest.fixture(scope="module")
def lakes(spark, lake_home: Path, tmp_path_factory, rows) -> tuple[Lake, Lake, Observed]:
    scoped_landing = tmp_path_factory.mktemp("scoped-landing")
    reference_landing = tmp_path_factory.mktemp("scoped-reference-landing")
    scoped = Lake("scoped_runs", scoped_landing, lake_home)
    reference = Lake("scoped_reference", reference_landing, lake_home)

    def seen(lake: Lake) -> dict[str, set]:
        return {
            "staged": tenants_of(
                rows, f"{lake.schema}_staging.stg_records__changes", "staged_tenant_id"
            ),
            "states": tenants_of(rows, f"{lake.schema}_intermediate.int_record_states"),
            "records": tenants_of(rows, f"{lake.schema}.records"),
            "notified": tenants_of(rows, f"{lake.schema}.record_notifications"),
        }

    for landing in (scoped_landing, reference_landing):
        land(landing, seed=41)
    # globex's lines staged first: the acme run must leave them for globex's own run
    scoped.build(
        ["globex"],
        ["--select", "tenants", "stg_records__changes", "--exclude", "resource_type:test"],
    )
    scoped.build(["acme"])
    after_acme = seen(scoped)
    scoped.build(["globex"])
    after_globex = seen(scoped)
    reference.build()

    for landing in (scoped_landing, reference_landing):
        land(landing, seed=42)
    scoped.build()
    reference.build()
    return scoped, reference, Observed(after_acme, after_globex)


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


def table_rows(rows, table: str, columns: list[str]) -> Counter:
    def frozen(value: object) -> object:
        return tuple(value) if isinstance(value, list) else value

    return Counter(
        tuple(frozen(row[column]) for column in columns)
        for row in rows(f"select {', '.join(columns)} from {table}")
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


def record_line(tenant_id: str, record_id: str, op: str, seq: int) -> str:
    return json.dumps(
        {
            "tenant_id": tenant_id,
            "record_id": record_id,
            "op": op,
            "event_ts": "2026-01-05T10:00:00Z",
            "seq": seq,
            "record_type": "profile",
            "primary_id": f"email:{record_id}@example.com",
            "payload": {"visits": seq},
        }
    )


# records' commits are dated back this far: notifications read int_record_states, not records'
# history, so how old records' commits are (past the 7 days Delta keeps removed files, or gone
# from its log) changes nothing
HISTORY_AGE_DAYS = 30


@dataclass(frozen=True)
class VanishedTenant:
    lake: Lake
    records_location: Path
    notified: Counter


@pytest.fixture(scope="module")
def vanished_tenant(spark, lake_home: Path, tmp_path_factory, rows) -> VanishedTenant:
    """globex's record is inserted and deleted by runs that stop at records, then acme is
    notified past those versions: globex has no row in records nor in record_notifications.
    `delete_superseded_states` runs then (globex's insert is superseded by its delete, but not
    notified yet). Then, records' commits dated a month back, a run for every tenant notifies
    globex's changes and a new change of each tenant."""
    landing = tmp_path_factory.mktemp("vanished-tenant-landing")
    lake = Lake("vanished_tenant", landing, lake_home, tuple(NOTIFICATIONS_ONLY))
    for stream in ("records", "id_mutations", "entity_names"):
        (landing / stream).mkdir()

    def land_records(name: str, *lines: str) -> None:
        (landing / "records" / name).write_text("".join(line + "\n" for line in lines))

    land_records(
        "part-1.jsonl",
        record_line("globex", "g1", "upsert", 1),
        record_line("acme", "a1", "upsert", 1),
    )
    globex_only = ["--vars", "{tenants: [globex]}"]
    run_dbt(RECORDS_ONLY + globex_only, env=lake.env(), target_path=lake.target_path())
    land_records("part-2.jsonl", record_line("globex", "g1", "delete", 2))
    run_dbt(RECORDS_ONLY + globex_only, env=lake.env(), target_path=lake.target_path())
    lake.build(["acme"])
    run_dbt(
        ["run-operation", "delete_superseded_states"],
        env=lake.env(),
        target_path=lake.target_path(),
    )

    records_location = table_location(spark, f"{lake.schema}.records")
    date_commits_back(records_location, HISTORY_AGE_DAYS)
    land_records(
        "part-3.jsonl",
        record_line("globex", "g2", "upsert", 3),
        record_line("acme", "a1", "upsert", 3),
    )
    lake.build()
    date_commits_back(records_location, HISTORY_AGE_DAYS)
    return VanishedTenant(
        lake=lake,
        records_location=records_location,
        notified=table_rows(
            rows, f"{lake.schema}.record_notifications", ["tenant_id", "record_id", "change_type"]
        ),
    )


def test_a_tenant_gone_from_records_before_its_first_notification_is_still_notified(
    vanished_tenant: VanishedTenant,
) -> None:
    """Both of globex's changes, though delete_superseded_states ran in between: it keeps the
    versions not yet notified."""
    assert vanished_tenant.notified == Counter(
        {
            ("acme", "a1", "insert"): 1,
            ("globex", "g1", "insert"): 1,
            ("globex", "g1", "delete"): 1,
            ("acme", "a1", "update"): 1,
            ("globex", "g2", "insert"): 1,
        }
    )


def test_a_tenant_quiet_for_a_month_is_notified_of_its_next_change(
    vanished_tenant: VanishedTenant, rows
) -> None:
    """Every commit of records dated 30 days back, as if no tenant had changed for a month while
    VACUUM ran; then acme changes again: notified once."""
    lake = vanished_tenant.lake
    date_commits_back(vanished_tenant.records_location, HISTORY_AGE_DAYS)
    (lake.landing / "records" / "part-4.jsonl").write_text(
        record_line("acme", "a1", "upsert", 4) + "\n"
    )
    lake.build()
    notified = table_rows(
        rows, f"{lake.schema}.record_notifications", ["tenant_id", "record_id", "change_type"]
    )
    assert notified[("acme", "a1", "update")] == 2


def test_a_tenant_quiet_while_another_changes_in_runs_of_its_own_is_notified_later(
    vanished_tenant: VanishedTenant, spark, rows
) -> None:
    """globex has no change for a month while acme changes in two runs scoped to acme
    (records' commits dated back). A globex run with nothing new neither fails nor writes
    notifications; globex's next change is notified once, and acme's not again."""
    lake = vanished_tenant.lake
    notifications = f"{lake.schema}.record_notifications"
    columns = ["tenant_id", "record_id", "change_type"]
    date_commits_back(vanished_tenant.records_location, HISTORY_AGE_DAYS)
    for seq in (5, 6):
        (lake.landing / "records" / f"part-{seq}a.jsonl").write_text(
            record_line("acme", "a1", "upsert", seq) + "\n"
        )
        lake.build(["acme"])
    date_commits_back(vanished_tenant.records_location, HISTORY_AGE_DAYS)
    before = table_rows(rows, notifications, columns)
    version = _versions(spark, notifications)

    lake.build(["globex"])
    assert _versions(spark, notifications) == version
    (lake.landing / "records" / "part-7.jsonl").write_text(
        record_line("globex", "g2", "upsert", 7) + "\n"
    )
    lake.build(["globex"])
    added = table_rows(rows, notifications, columns) - before
    assert added == Counter({("globex", "g2", "update"): 1})


def remove_expired_records_commits(spark, vanished_tenant: VanishedTenant, seq: int) -> int:
    """Has Delta's log clean-up remove records' commits before the newest (its log kept 8
    days, its commits dated 20 days back, a checkpoint at every commit), through a MERGE of a
    new acme change numbered `seq`. Returns the oldest version left."""
    lake = vanished_tenant.lake
    spark.sql(
        f"alter table {lake.schema}.records set tblproperties "
        "('delta.logRetentionDuration' = 'interval 8 days', 'delta.checkpointInterval' = '1')"
    )
    date_commits_back(vanished_tenant.records_location, 20, files="*")
    # acme's next MERGE writes a checkpoint, and Delta then removes the expired commits
    (lake.landing / "records" / f"part-{seq}.jsonl").write_text(
        record_line("acme", "a1", "upsert", seq) + "\n"
    )
    run_dbt(
        [*RECORDS_ONLY, "--vars", "{tenants: [acme]}"],
        env=lake.env(),
        target_path=lake.target_path(),
    )
    history = spark.sql(f"describe history {lake.schema}.records").collect()
    return min(row["version"] for row in history)


def test_a_change_whose_records_commit_left_the_log_is_still_notified(
    vanished_tenant: VanishedTenant, spark, rows
) -> None:
    """globex has a change in records not yet notified when Delta's log clean-up removes the
    commits before the newest (records' log kept 8 days, its commits dated 20 days back, a
    checkpoint at every commit): the change is notified all the same, as is acme's, once."""
    lake = vanished_tenant.lake
    notifications = f"{lake.schema}.record_notifications"
    columns = ["tenant_id", "record_id", "change_type"]
    (lake.landing / "records" / "part-8.jsonl").write_text(
        record_line("globex", "g3", "upsert", 8) + "\n"
    )
    run_dbt(
        [*RECORDS_ONLY, "--vars", "{tenants: [globex]}"],
        env=lake.env(),
        target_path=lake.target_path(),
    )
    oldest_kept = remove_expired_records_commits(spark, vanished_tenant, seq=9)
    assert oldest_kept > 0
    before = table_rows(rows, notifications, columns)

    lake.build()
    added = table_rows(rows, notifications, columns) - before
    assert added == Counter({("globex", "g3", "insert"): 1, ("acme", "a1", "update"): 1})


def test_a_full_refresh_of_notifications_starts_over_with_one_insert_per_live_record(
    spark, vanished_tenant: VanishedTenant, rows
) -> None:
    """Once Delta's log clean-up has removed records' first commits, a full refresh of
    record_notifications still builds: one insert per live record, at records' latest version,
    append-only again."""
    lake = vanished_tenant.lake
    records = f"{lake.schema}.records"
    notifications = f"{lake.schema}.record_notifications"
    oldest_kept = remove_expired_records_commits(spark, vanished_tenant, seq=11)
    operations = [row["operation"] for row in spark.sql(f"describe history {records}").collect()]
    assert oldest_kept > 0 and not any(op.startswith("CREATE") for op in operations), operations
    live = table_rows(rows, records, ["tenant_id", "record_id"])
    assert live

    run_dbt(
        ["build", "--full-refresh", "--select", "record_notifications", *NO_TESTS],
        env=lake.env(),
        target_path=lake.target_path(),
    )
    columns = ["tenant_id", "record_id", "change_type", "records_version"]
    assert table_rows(rows, notifications, columns) == Counter(
        {(*key, "insert", _versions(spark, records)): 1 for key in live}
    )
    # Delta refuses to replace an append-only table: the full refresh lifted the property, and
    # the replacement set it again
    append_only = spark.sql(f"show tblproperties {notifications} ('delta.appendOnly')").first()
    assert append_only["value"] == "true"


def test_a_replacement_of_records_notifies_nothing(
    spark, vanished_tenant: VanishedTenant, rows
) -> None:
    """A full refresh of records alone rewrites the same rows: no record changed, and the next
    run notifies nothing. A full refresh of both starts record_notifications at the
    replacement: one insert per record."""
    lake = vanished_tenant.lake
    records = f"{lake.schema}.records"
    notifications = f"{lake.schema}.record_notifications"
    no_tests = ["--exclude", "resource_type:test"]

    def replaced() -> int:
        latest = spark.sql(f"describe history {records} limit 1").first()
        assert latest["operation"].startswith("CREATE OR REPLACE"), latest["operation"]
        return int(latest["version"])

    live = table_rows(rows, records, ["tenant_id", "record_id"])
    assert live
    notified = _versions(spark, notifications)
    run_dbt(
        ["build", "--full-refresh", "--select", "records", *no_tests],
        env=lake.env(),
        target_path=lake.target_path(),
    )
    replaced()
    lake.build()
    assert _versions(spark, notifications) == notified

    run_dbt(
        ["build", "--full-refresh", "--select", "records", "record_notifications", *no_tests],
        env=lake.env(),
        target_path=lake.target_path(),
    )
    replaced_again = replaced()
    columns = ["tenant_id", "record_id", "change_type", "records_version"]
    assert table_rows(rows, notifications, columns) == Counter(
        {(*key, "insert", replaced_again): 1 for key in live}
    )


def test_notifications_left_writable_by_a_full_refresh_are_append_only_again_after_a_run(
    spark, vanished_tenant: VanishedTenant, rows, capsys
) -> None:
    """A full refresh lifts delta.appendOnly before it replaces record_notifications; a
    replacement that fails after the lift leaves the table writable. The next incremental run
    sets the property again, saying so, and a run after it commits nothing."""
    lake = vanished_tenant.lake
    notifications = f"{lake.schema}.record_notifications"
    columns = ["tenant_id", "record_id", "change_type", "records_version"]

    def append_only() -> str:
        return spark.sql(f"show tblproperties {notifications} ('delta.appendOnly')").first()[
            "value"
        ]

    spark.sql(f"alter table {notifications} set tblproperties ('delta.appendOnly' = 'false')")
    before = table_rows(rows, notifications, columns)
    capsys.readouterr()
    run = ["run", "--select", "record_notifications"]
    run_dbt(run, env=lake.env(), target_path=lake.target_path())
    assert "delta.appendOnly was lifted" in capsys.readouterr().out
    assert append_only() == "true"
    assert table_rows(rows, notifications, columns) == before

    version = _versions(spark, notifications)
    run_dbt(run, env=lake.env(), target_path=lake.target_path())
    assert "delta.appendOnly was lifted" not in capsys.readouterr().out
    assert _versions(spark, notifications) == version


def test_records_apply_states_left_behind_by_runs_of_other_tenants(
    spark, lake_home: Path, tmp_path_factory, rows
) -> None:
    """States that runs stopping at int_record_states left for two tenants, at batches below
    the other tenant's watermark in records, all reach records in one run (records reads the
    states past a literal floor too, which must be the smallest watermark of the tenants
    with new states)."""
    landing = tmp_path_factory.mktemp("states-left-behind-landing")
    lake = Lake("states_left_behind", landing, lake_home)
    for stream in ("records", "id_mutations", "entity_names"):
        (landing / stream).mkdir()

    def step(name: str, lines: list[str], selection: list[str], tenants: str | None) -> None:
        (landing / "records" / name).write_text("".join(line + "\n" for line in lines))
        scope = [] if tenants is None else ["--vars", f"{{tenants: [{tenants}]}}"]
        args = ["build", "--select", *selection, "--exclude", "resource_type:test", *scope]
        run_dbt(args, env=lake.env(), target_path=lake.target_path())

    states_only = ["stg_records__changes", "int_record_states"]
    step(
        "part-1.jsonl",
        [record_line(t, f"{t}-1", "upsert", 1) for t in ("acme", "globex")],
        ["+records"],
        None,
    )
    step(
        "part-2.jsonl",
        [record_line(t, f"{t}-1", "upsert", 2) for t in ("acme", "globex")],
        states_only,
        "globex",
    )
    step("part-3.jsonl", [record_line("acme", "acme-1", "upsert", 3)], ["+records"], "acme")
    step("part-4.jsonl", [record_line("acme", "acme-1", "upsert", 4)], states_only, "acme")

    def newest_batches(table: str, column: str) -> dict[str, int]:
        found = rows(f"select tenant_id, max({column}) as batch from {table} group by tenant_id")
        return {row["tenant_id"]: row["batch"] for row in found}

    # both tenants wait with new states, globex's older than acme's watermark in records
    assert newest_batches(f"{lake.schema}.records", "ingest_batch_id") == {"acme": 2, "globex": 0}
    states = f"{lake.schema}_intermediate.int_record_states"
    assert newest_batches(states, "last_ingest_batch_id") == {"acme": 3, "globex": 1}

    run_dbt(["run", "--select", "records"], env=lake.env(), target_path=lake.target_path())
    applied = table_rows(
        rows, f"{lake.schema}.records", ["tenant_id", "record_id", "payload", "ingest_batch_id"]
    )
    assert applied == Counter(
        {("acme", "acme-1", '{"visits":4}', 3): 1, ("globex", "globex-1", '{"visits":2}', 1): 1}
    )


def test_a_full_refresh_cannot_be_limited_to_some_tenants(lakes, spark, rows, capsys) -> None:
    """It would rebuild each incremental table with those tenants' rows only: the run stops
    before its ingest drops the landing tables, naming the tenants, and changes nothing."""
    scoped, _, _ = lakes
    tables = [f"{scoped.schema}.records", f"{scoped.schema}_landing.records"]
    versions = {table: _versions(spark, table) for table in tables}
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
    assert {table: _versions(spark, table) for table in tables} == versions
    assert tenants_of(rows, f"{scoped.schema}.records") == {"acme", "globex"}


def _versions(spark, table: str) -> int:
    return spark.sql(f"describe history {table} limit 1").first()["version"]


def test_deleting_superseded_states_changes_no_result(lakes, spark, rows) -> None:
    """Runs append records' new versions to int_record_states; delete_superseded_states keeps
    only each record's newest, and the next run finds nothing to do. Last in this module: it
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

    versions = {table: _versions(spark, table) for table in (states, records)}
    scoped_run = ["run", "--select", "int_record_states", "records"]
    run_dbt(scoped_run, env=scoped.env(), target_path=scoped.target_path())
    assert {table: _versions(spark, table) for table in (states, records)} == versions
