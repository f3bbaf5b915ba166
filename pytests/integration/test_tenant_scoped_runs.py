"""Runs scoped to some tenants (var tenants) advance per-tenant watermarks independently: a
tenant's records and notifications across runs of other tenants (docs/locks.md,
docs/notifications.md).

One lake, one story of in-process dbt runs on hand-made lines, each line's `seq` the number of
the file it lands in. Each scenario has tenants of its own and its tests read only theirs:
acme and globex for the notifications, initech and umbrella for the states left behind.

1. globex's record g1 is inserted and deleted by runs that stop at records (the first of them
   also applies initech's and umbrella's first lines), then acme is notified past those
   versions (record_notifications' first build) and `delete_superseded_states` runs; records'
   commits dated a month back, a run for every tenant notifies globex's changes and acme's
   next change;
2. record_notifications is left writable (delta.appendOnly lifted, as a full refresh that fails
   after the lift leaves it); acme changes in a run of its own (its file also lands a line of
   umbrella's, which the run leaves in the landing tables), then a run for globex finds
   nothing new;
3. a run stopping at records for globex and initech applies globex's two changes and
   initech's next one; a run stopping at int_record_states for initech and umbrella stages
   initech's next change and umbrella's waiting line;
4. Delta's log clean-up removes records' commits before the newest (its log kept 8 days, its
   commits dated 20 days back, a checkpoint at every commit), through an acme run that stops
   at records; then a run for every tenant notifies globex's and acme's changes and applies
   the states initech and umbrella were left with;
5. a full refresh of record_notifications; a full refresh of records alone, then a run for
   every tenant; a full refresh of both.

The fixture reads what each step left as it goes (the lake moves on), and the tests check
what it read. Interleaved scoped runs compared with one run per wave over every tenant:
reference_lake/test_scoped_and_batched_runs.py.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pytests.support.dbt_runner import run_dbt
from pytests.support.delta_commits import date_commits_back, table_location
from pytests.support.scoped_lake import Lake, latest_version, table_rows

pytestmark = pytest.mark.integration

SCHEMA = "tenant_scoped"
NO_TESTS = ("--exclude", "resource_type:test")
# records' versions in int_record_states, not applied to records
STATES_ONLY = ("--select", "stg_records__changes", "int_record_states", *NO_TESTS)
# builds records and what it reads, without notifying
RECORDS_ONLY = ("--select", "+records", *NO_TESTS)
# records and its notifications: all that the lake's tests read
NOTIFICATIONS = ("--select", "+record_notifications", *NO_TESTS)

NOTIFIED_TENANTS = ("acme", "globex")
LEFT_BEHIND_TENANTS = ("initech", "umbrella")
CHANGE = ["tenant_id", "record_id", "change_type"]
VERSIONED_CHANGE = [*CHANGE, "records_version"]
LIFTED = "delta.appendOnly was lifted"

# records' commits are dated back this far: notifications read int_record_states, not records'
# history, so how old records' commits are (past the 7 days Delta keeps removed files, or gone
# from its log) changes nothing
HISTORY_AGE_DAYS = 30


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


def of_tenants(counted: Counter, tenants: Sequence[str]) -> Counter:
    """The rows of `tenants` (each row's first value its tenant_id)."""
    return Counter({row: count for row, count in counted.items() if row[0] in tenants})


def added(before: Counter, after: Counter, columns: int = len(CHANGE)) -> Counter:
    """The rows `after` has beyond `before`, cut to their first `columns` values."""
    return Counter(row[:columns] for row in (after - before).elements())


@dataclass
class Story:
    """What each step of the story left (the fixture fills it as the lake moves on)."""

    # 1. acme's and globex's notifications; what the run after the quiet month added for acme
    first_notified: Counter = field(default_factory=Counter)
    quiet_month_added: Counter = field(default_factory=Counter)
    # 2. record_notifications (every tenant's rows) around the run after the lift
    before_lifted_run: Counter = field(default_factory=Counter)
    after_lifted_run: Counter = field(default_factory=Counter)
    lifted_run_log: str = ""
    lifted_run_append_only: str = ""
    quiet_run_log: str = ""
    quiet_run_versions: tuple[int, int] = (0, 0)  # record_notifications' before, after
    # 3. and 4.
    globex_changes_version: int = 0  # records' version that applied globex's changes
    oldest_version_kept: int = 0  # of records, after Delta's log clean-up
    newest_batches: dict[str, dict[str, int]] = field(default_factory=dict)  # before the apply
    added_after_clean_up: Counter = field(default_factory=Counter)  # acme's and globex's
    left_behind_applied: Counter = field(default_factory=Counter)  # records' rows then
    # 5.
    records_operations: list[str] = field(default_factory=list)  # before the full refreshes
    live: Counter = field(default_factory=Counter)  # records' keys, which step 5 leaves as is
    refreshed: Counter = field(default_factory=Counter)
    refreshed_records_version: int = 0
    refreshed_append_only: str = ""
    replacement: tuple[str, int] = ("", 0)  # records' latest operation and version
    replacement_run_versions: tuple[int, int] = (0, 0)  # record_notifications' before, after
    second_replacement: tuple[str, int] = ("", 0)
    replaced_both: Counter = field(default_factory=Counter)


@pytest.fixture(scope="module")
def scoped(spark, lake_home: Path, tmp_path_factory, rows) -> Story:
    landing = tmp_path_factory.mktemp("tenant-scoped-landing")
    for stream in ("records", "id_mutations", "entity_names"):
        (landing / stream).mkdir()
    lake = Lake(SCHEMA, landing, lake_home)
    records = f"{SCHEMA}.records"
    notifications = f"{SCHEMA}.record_notifications"
    states = f"{SCHEMA}_intermediate.int_record_states"

    def land(seq: int, *lines: Callable[[int], str]) -> None:
        (landing / "records" / f"part-{seq}.jsonl").write_text(
            "".join(line(seq) + "\n" for line in lines)
        )

    def upsert(tenant_id: str, record_id: str) -> Callable[[int], str]:
        return lambda seq: record_line(tenant_id, record_id, "upsert", seq)

    def delete(tenant_id: str, record_id: str) -> Callable[[int], str]:
        return lambda seq: record_line(tenant_id, record_id, "delete", seq)

    def dbt(*args: str, tenants: Sequence[str] | None = None) -> str:
        """`dbt <args>` on the lake, for `tenants` only if given; what it logged."""
        logged: list[str] = []
        scope = [] if tenants is None else ["--vars", "{tenants: [" + ", ".join(tenants) + "]}"]
        run_dbt(
            [*args, *scope],
            env=lake.env(),
            target_path=lake.target_path(),
            callbacks=[lambda event: logged.append(event.info.msg)],
        )
        return "\n".join(logged)

    def notified(columns: list[str] = CHANGE) -> Counter:
        return table_rows(rows, notifications, columns)

    def append_only() -> str:
        found = spark.sql(f"show tblproperties {notifications} ('delta.appendOnly')").first()
        return found["value"]

    def latest_commit() -> tuple[str, int]:
        latest = spark.sql(f"describe history {records} limit 1").first()
        return latest["operation"], int(latest["version"])

    def newest_batches(table: str, column: str) -> dict[str, int]:
        tenants = ", ".join(f"'{tenant}'" for tenant in LEFT_BEHIND_TENANTS)
        found = rows(
            f"select tenant_id, max({column}) as batch from {table} "
            f"where tenant_id in ({tenants}) group by tenant_id"
        )
        return {row["tenant_id"]: row["batch"] for row in found}

    story = Story()

    # 1. globex gone from records before its first notification; acme quiet for a month
    land(
        1,
        upsert("globex", "g1"),
        upsert("acme", "a1"),
        upsert("initech", "i1"),
        upsert("umbrella", "u1"),
    )
    dbt("build", *RECORDS_ONLY, tenants=["globex", "initech", "umbrella"])
    land(2, delete("globex", "g1"))
    dbt("build", *RECORDS_ONLY, tenants=["globex"])
    dbt("build", *NOTIFICATIONS, tenants=["acme"])
    dbt("run-operation", "delete_superseded_states")
    records_location = table_location(spark, records)
    date_commits_back(records_location, HISTORY_AGE_DAYS)
    before = notified()
    land(3, upsert("globex", "g2"), upsert("acme", "a1"))
    dbt("build", *NOTIFICATIONS)
    after = notified()
    story.first_notified = of_tenants(after, NOTIFIED_TENANTS)
    story.quiet_month_added = of_tenants(added(before, after), ["acme"])
    date_commits_back(records_location, HISTORY_AGE_DAYS)

    # 2. record_notifications left writable; acme changes in a run of its own, globex is quiet
    spark.sql(f"alter table {notifications} set tblproperties ('delta.appendOnly' = 'false')")
    story.before_lifted_run = notified(VERSIONED_CHANGE)
    # umbrella's line waits in the landing tables: the run is acme's
    land(4, upsert("acme", "a1"), upsert("umbrella", "u1"))
    story.lifted_run_log = dbt("build", *NOTIFICATIONS, tenants=["acme"])
    story.after_lifted_run = notified(VERSIONED_CHANGE)
    story.lifted_run_append_only = append_only()
    date_commits_back(records_location, HISTORY_AGE_DAYS)
    version = latest_version(spark, notifications)
    story.quiet_run_log = dbt("build", *NOTIFICATIONS, tenants=["globex"])
    story.quiet_run_versions = (version, latest_version(spark, notifications))

    # 3. globex's changes and initech's applied to records; initech's and umbrella's next
    # states left in int_record_states
    land(5, upsert("globex", "g2"), upsert("globex", "g3"), upsert("initech", "i1"))
    dbt("build", *RECORDS_ONLY, tenants=["globex", "initech"])
    story.globex_changes_version = latest_version(spark, records)
    land(6, upsert("initech", "i1"))
    dbt("build", *STATES_ONLY, tenants=["initech", "umbrella"])

    # 4. Delta's log clean-up, through acme's next MERGE (which writes a checkpoint, and Delta
    # then removes the expired commits); then a run for every tenant
    spark.sql(
        f"alter table {records} set tblproperties "
        "('delta.logRetentionDuration' = 'interval 8 days', 'delta.checkpointInterval' = '1')"
    )
    date_commits_back(records_location, 20, files="*")
    land(7, upsert("acme", "a1"))
    dbt("build", *RECORDS_ONLY, tenants=["acme"])
    history = spark.sql(f"describe history {records}").collect()
    story.oldest_version_kept = min(row["version"] for row in history)
    story.newest_batches = {
        "records": newest_batches(records, "ingest_batch_id"),
        "states": newest_batches(states, "last_ingest_batch_id"),
    }
    before = notified()
    dbt("build", *NOTIFICATIONS)
    story.added_after_clean_up = of_tenants(added(before, notified()), NOTIFIED_TENANTS)
    story.left_behind_applied = of_tenants(
        table_rows(rows, records, ["tenant_id", "record_id", "payload", "ingest_batch_id"]),
        LEFT_BEHIND_TENANTS,
    )

    # 5. full refreshes
    history = spark.sql(f"describe history {records}").collect()
    story.records_operations = [row["operation"] for row in history]
    story.live = table_rows(rows, records, ["tenant_id", "record_id"])
    dbt("build", "--full-refresh", "--select", "record_notifications", *NO_TESTS)
    story.refreshed = notified(VERSIONED_CHANGE)
    story.refreshed_records_version = latest_version(spark, records)
    story.refreshed_append_only = append_only()
    version = latest_version(spark, notifications)
    dbt("build", "--full-refresh", "--select", "records", *NO_TESTS)
    story.replacement = latest_commit()
    dbt("build", *NOTIFICATIONS)
    story.replacement_run_versions = (version, latest_version(spark, notifications))
    dbt("build", "--full-refresh", "--select", "records", "record_notifications", *NO_TESTS)
    story.second_replacement = latest_commit()
    story.replaced_both = notified(VERSIONED_CHANGE)
    return story


def test_a_tenant_gone_from_records_before_its_first_notification_is_still_notified(
    scoped: Story,
) -> None:
    """Both of globex's changes to g1, though delete_superseded_states ran in between: it keeps
    the versions not yet notified."""
    assert scoped.first_notified == Counter(
        {
            ("acme", "a1", "insert"): 1,
            ("globex", "g1", "insert"): 1,
            ("globex", "g1", "delete"): 1,
            ("acme", "a1", "update"): 1,
            ("globex", "g2", "insert"): 1,
        }
    )


def test_a_tenant_quiet_for_a_month_is_notified_of_its_next_change(scoped: Story) -> None:
    """Every commit of records dated 30 days back, as if no tenant had changed for a month;
    then acme changes again: notified once."""
    assert scoped.quiet_month_added == Counter({("acme", "a1", "update"): 1})


def test_a_tenant_quiet_while_another_changes_in_runs_of_its_own_is_notified_later(
    scoped: Story,
) -> None:
    """globex has no change for a month while acme changes in runs scoped to acme (records'
    commits dated back). A globex run with nothing new neither fails nor writes
    notifications; globex's next changes are notified once, and acme's earlier change not
    again."""
    assert added(scoped.before_lifted_run, scoped.after_lifted_run) == Counter(
        {("acme", "a1", "update"): 1}
    )
    before, after = scoped.quiet_run_versions
    assert after == before
    assert of_tenants(scoped.added_after_clean_up, ["globex"]) == Counter(
        {("globex", "g2", "update"): 1, ("globex", "g3", "insert"): 1}
    )
    # acme's change since its own notifying run, once
    assert of_tenants(scoped.added_after_clean_up, ["acme"]) == Counter(
        {("acme", "a1", "update"): 1}
    )


def test_a_change_whose_records_commit_left_the_log_is_still_notified(scoped: Story) -> None:
    """globex has changes in records not yet notified when Delta's log clean-up removes the
    commits before the newest (records' log kept 8 days, its commits dated 20 days back, a
    checkpoint at every commit), the commit of those changes among them: they are notified all
    the same, as is acme's, once."""
    assert scoped.oldest_version_kept > scoped.globex_changes_version
    assert scoped.added_after_clean_up == Counter(
        {
            ("globex", "g2", "update"): 1,
            ("globex", "g3", "insert"): 1,
            ("acme", "a1", "update"): 1,
        }
    )


def test_a_full_refresh_of_notifications_starts_over_with_one_insert_per_live_record(
    scoped: Story,
) -> None:
    """Once Delta's log clean-up has removed records' first commits, a full refresh of
    record_notifications still builds: one insert per live record, at records' latest version,
    append-only again."""
    assert scoped.oldest_version_kept > 0
    assert not any(op.startswith("CREATE") for op in scoped.records_operations), (
        scoped.records_operations
    )
    assert scoped.live
    assert scoped.refreshed == Counter(
        {(*key, "insert", scoped.refreshed_records_version): 1 for key in scoped.live}
    )
    # Delta refuses to replace an append-only table: the full refresh lifted the property, and
    # the replacement set it again
    assert scoped.refreshed_append_only == "true"


def test_a_replacement_of_records_notifies_nothing(scoped: Story) -> None:
    """A full refresh of records alone rewrites the same rows: no record changed, and the next
    run notifies nothing. A full refresh of both starts record_notifications at the
    replacement: one insert per record."""
    operation, _ = scoped.replacement
    assert operation.startswith("CREATE OR REPLACE"), operation
    before, after = scoped.replacement_run_versions
    assert after == before
    operation, replaced_again = scoped.second_replacement
    assert operation.startswith("CREATE OR REPLACE"), operation
    assert scoped.live
    assert scoped.replaced_both == Counter(
        {(*key, "insert", replaced_again): 1 for key in scoped.live}
    )


def test_notifications_left_writable_by_a_full_refresh_are_append_only_again_after_a_run(
    scoped: Story,
) -> None:
    """A full refresh lifts delta.appendOnly before it replaces record_notifications; a
    replacement that fails after the lift leaves the table writable. The next incremental run
    sets the property again, saying so, and keeps every row, adding only its new change; a run
    after it commits nothing."""
    assert LIFTED in scoped.lifted_run_log
    assert scoped.lifted_run_append_only == "true"
    assert scoped.before_lifted_run - scoped.after_lifted_run == Counter()
    assert added(scoped.before_lifted_run, scoped.after_lifted_run) == Counter(
        {("acme", "a1", "update"): 1}
    )
    assert LIFTED not in scoped.quiet_run_log
    before, after = scoped.quiet_run_versions
    assert after == before


def test_records_apply_states_left_behind_by_runs_of_other_tenants(scoped: Story) -> None:
    """States that runs stopping at int_record_states left for two tenants, umbrella's at a
    batch below initech's watermark in records (its line landed in a run of acme's, then
    staged by the run that stopped at the states), all reach records in one run (records
    reads the states past a literal floor too, which must be the smallest watermark of the
    tenants with new states)."""
    in_records = scoped.newest_batches["records"]
    in_states = scoped.newest_batches["states"]
    # both tenants wait with new states, umbrella's older than initech's watermark in records
    assert (
        in_records["umbrella"]
        < in_states["umbrella"]
        < in_records["initech"]
        < in_states["initech"]
    ), scoped.newest_batches
    assert scoped.left_behind_applied == Counter(
        {
            ("initech", "i1", '{"visits":6}', in_states["initech"]): 1,
            ("umbrella", "u1", '{"visits":4}', in_states["umbrella"]): 1,
        }
    )
