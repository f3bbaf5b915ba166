"""Runs scoped to some tenants (var tenants) advance per-tenant watermarks independently: a
tenant's records and notifications across runs of other tenants (docs/locks.md,
docs/notifications.md).

The vanished tenant's lake: hand-made acme and globex lines, runs for one tenant or the other
(some stopping at records), records' commits dated back and Delta's log cleaned up; then full
refreshes. The lake of states left behind: runs stopping at int_record_states for one tenant,
then one run of records. Interleaved scoped runs compared with one run per wave over every
tenant: reference_lake/test_scoped_and_batched_runs.py.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytests.support.dbt_runner import run_dbt
from pytests.support.delta_commits import date_commits_back, table_location
from pytests.support.scoped_lake import Lake, latest_version, table_rows

pytestmark = pytest.mark.integration

# builds records and what it reads, without notifying
RECORDS_ONLY = ["build", "--select", "+records", "--exclude", "resource_type:test"]
# records and its notifications: all that the vanished tenant's lake reads
NOTIFICATIONS_ONLY = ["--select", "+record_notifications", "--exclude", "resource_type:test"]
NO_TESTS = ["--exclude", "resource_type:test"]


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
    version = latest_version(spark, notifications)

    lake.build(["globex"])
    assert latest_version(spark, notifications) == version
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
        {(*key, "insert", latest_version(spark, records)): 1 for key in live}
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
    notified = latest_version(spark, notifications)
    run_dbt(
        ["build", "--full-refresh", "--select", "records", *no_tests],
        env=lake.env(),
        target_path=lake.target_path(),
    )
    replaced()
    lake.build()
    assert latest_version(spark, notifications) == notified

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

    version = latest_version(spark, notifications)
    run_dbt(run, env=lake.env(), target_path=lake.target_path())
    assert "delta.appendOnly was lifted" not in capsys.readouterr().out
    assert latest_version(spark, notifications) == version


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
