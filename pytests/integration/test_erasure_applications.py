"""Fixing a request's subject on a built lake (SPEC.md section 7), by the build after the
person's data landed (int_erasure_applications): the named identity's
profile with every identity renamed into it and the records of any of them, kept only as
hashes salted per tenant; an identity never seen erases only itself; a repeated request_id
changes nothing; no commit names an identity; the staged lines are rewritten (erased rows in
landing and staging, ingest_errors rows deleted, related ids dropped from the landed text), the
accounting counts them as erased, and a full refresh afterwards gives the same tables. A lake
of its own: a whole build, then three more (the last one a full refresh)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from profile_lake.erasure.command import forget_request, land_request
from profile_lake.erasure.hashing import erasure_hash
from profile_lake.spark.erasure_apply import LakeTables, fix_new_requests
from profile_lake.spark.records import current_states
from pytests.support.file_scan import files_holding

pytestmark = pytest.mark.integration

SCHEMA = "erasure_subject"
TS = "2026-12-01T10:00:00Z"
ANN, CRM, COOKIE, BOB = (
    "email:ann@example.com",
    "crm:ann-1",
    "cookie:ann-old",
    "email:bob@example.com",
)


def record(
    record_id: str, primary_id: str, related: list[str] | None = None, op: str = "upsert"
) -> str:
    return json.dumps(
        {
            "tenant_id": "acme",
            "record_id": record_id,
            "op": op,
            "event_ts": TS,
            "seq": 0,
            "record_type": "profile",
            "primary_id": primary_id,
            "related_ids": related or [],
            "payload": {"n": record_id},
        }
    )


SUBJECT_VALUES = [ANN, CRM, COOKIE, "Ann"]
# quarantined lines (an op out of its rule): one of the person's, one relating to her
BAD_OWN, BAD_RELATED = record("r-bad", ANN, op="nope"), record("r-bob-bad", BOB, [ANN], op="nope")
# tables compared before and after the full refresh
KEPT_BY_FULL_REFRESH = ("records", "identity_map", "entity_names", "ingest_file_accounting")


def tables_naming(spark, values: list[str]) -> dict[str, int]:
    """Rows of tenant acme naming one of `values`, per table of the lake's output and
    intermediate schemas (int_record_states: each record's newest version)."""
    found: dict[str, int] = {}
    for schema in (SCHEMA, f"{SCHEMA}_intermediate", f"{SCHEMA}_staging", f"{SCHEMA}_landing"):
        views = {row["viewName"] for row in spark.sql(f"show views in {schema}").collect()}
        for row in spark.sql(f"show tables in {schema}").collect():
            name = row["tableName"]
            if name in views or row["isTemporary"]:
                continue
            frame = spark.table(f"{schema}.{name}")
            if "tenant_id" not in frame.columns:
                continue
            if name == "int_record_states":
                frame = current_states(frame)
            text = frame.where("tenant_id = 'acme'").select(F.to_json(F.struct("*"))).collect()
            hits = sum(1 for (line,) in text if any(value in line for value in values))
            if hits:
                found[name] = hits
    return found


# a full refresh ingests every landing file again, in new batches
RENUMBERED = {"ingest_batch_id", "ingested_at", "last_ingested_at"}


def kept_tables(rows) -> dict[str, list[str]]:
    return {
        table: sorted(
            repr({key: value for key, value in row.items() if key not in RENUMBERED})
            for row in rows(f"select * from {SCHEMA}.{table}")
        )
        for table in KEPT_BY_FULL_REFRESH
    }


@pytest.fixture(scope="module")
def fixed(spark, lake_home: Path, tmp_path_factory, lake_builder, rows) -> dict:
    landing = tmp_path_factory.mktemp("erasure-subject-landing")
    for stream in ("records", "id_mutations", "entity_names"):
        (landing / stream).mkdir()
    (landing / "entity_names" / "part-1.jsonl").write_text(
        json.dumps({"tenant_id": "acme", "id": ANN, "name": "Ann", "updated_ts": TS, "seq": 1})
        + "\n"
    )
    (landing / "records" / "part-1.jsonl").write_text(
        "\n".join(
            [
                record("r-ann", ANN, [CRM]),
                record("r-crm", CRM),
                record("r-bob", BOB),
                BAD_OWN,
                BAD_RELATED,
            ]
        )
        + "\n"
    )
    (landing / "id_mutations" / "part-1.jsonl").write_text(
        json.dumps(
            {"tenant_id": "acme", "from_id": COOKIE, "to_id": ANN, "executed_ts": TS, "seq": 1}
        )
        + "\n"
    )
    built = lake_builder(lake_home, SCHEMA, landing)
    # the requests land after the person's data: the next build fixes their subjects from
    # the tables the first one built
    at = datetime(2026, 12, 1, 10, tzinfo=UTC)
    land_request(forget_request("acme", COOKIE, "r-ann", at), landing)
    land_request(forget_request("acme", "email:never@example.com", "r-never", at), landing)
    # the same request_id again, naming bob, later in the batch (lines are taken in the order
    # of batch, file and line): it changes nothing
    (landing / "erasures" / "zz-repeat.jsonl").write_text(
        json.dumps(
            {"tenant_id": "acme", "request_id": "r-ann", "identity": BOB, "requested_ts": TS}
        )
        + "\n"
    )
    built.dbt(["build"])
    applications = rows(f"select * from {SCHEMA}_intermediate.int_erasure_applications")
    tables = LakeTables(
        requests=f"{SCHEMA}_staging.stg_erasures__requests",
        identity_map=f"{SCHEMA}.identity_map",
        profile_identities=f"{SCHEMA}.profile_identities",
        record_states=f"{SCHEMA}_intermediate.int_record_states",
        control_schema=f"{SCHEMA}_control",
    )
    second = fix_new_requests(spark, tables, None)
    after_erasure = {
        "records": rows(f"select * from {SCHEMA}.records where tenant_id = 'acme'"),
        "requests": rows(f"select * from {SCHEMA}.erasure_requests"),
        "notifications": rows(
            f"select * from {SCHEMA}.record_notifications where tenant_id = 'acme'"
        ),
    }
    # lines naming the erased after the request: they change nothing. A purge horizon of 0
    # hours: the run's end purges the lake (the next whole build shows it purged)
    (landing / "records" / "part-2.jsonl").write_text(
        "\n".join([record("r-late", CRM), record("r-ann", BOB), record("r-bob-2", BOB, [ANN])])
        + "\n"
    )
    built.dbt(["build", "--vars", json.dumps({"erasure_purge_hours": 0})])
    purges = rows(f"select * from {SCHEMA}_control.purge_events")
    state_versions = rows(
        f"select to_json(struct(*)) as version from {SCHEMA}_intermediate.int_record_states "
        "where tenant_id = 'acme'"
    )
    lake_files = [*(lake_home / "warehouse").glob(f"{SCHEMA}*.db")]
    purged_files = {
        "subject": files_holding(lake_files, SUBJECT_VALUES),
        "bob": files_holding(lake_files, [BOB]),
    }
    before_full_refresh = kept_tables(rows)
    notifications = rows(f"select * from {SCHEMA}.record_notifications where tenant_id = 'acme'")
    built.dbt(["build", "--full-refresh"])
    salt = bytes(
        rows(f"select salt from {SCHEMA}_control.erasure_salts where tenant_id = 'acme'")[0]["salt"]
    )
    return {
        "built": built,
        "applications": applications,
        "second": second,
        "salt": salt,
        "erased": rows(f"select request_id, kind, hash from {tables.erased_set}"),
        "events": rows(f"select * from {tables.events}"),
        "after_erasure": after_erasure,
        "records": rows(f"select * from {SCHEMA}.records where tenant_id = 'acme'"),
        "naming_the_subject": tables_naming(spark, SUBJECT_VALUES),
        "requests": rows(f"select * from {SCHEMA}.erasure_requests"),
        "naming_bob": tables_naming(spark, [BOB]),
        "purges": purges,
        "state_versions": [row["version"] for row in state_versions],
        "notifications": notifications,
        "purged_files": purged_files,
        "before_full_refresh": before_full_refresh,
        "after_full_refresh": kept_tables(rows),
        "accounting": {
            row["source_file"]: row
            for row in rows(f"select * from {SCHEMA}.ingest_file_accounting")
        },
        "landing_records": rows(f"select * from {SCHEMA}_landing.records where tenant_id = 'acme'"),
        "errors": rows(f"select * from {SCHEMA}.ingest_errors where tenant_id = 'acme'"),
        "commits": files_holding(
            [lake_home / "warehouse" / f"{SCHEMA}_control.db"],
            [ANN, CRM, COOKIE, "never@example.com"],
        ),
    }


def test_the_subject_is_the_profile_with_its_renamed_identities_and_records(fixed) -> None:
    salt = fixed["salt"]
    erased = {(row["kind"], row["hash"]) for row in fixed["erased"] if row["request_id"] == "r-ann"}
    expected = {("identity", erasure_hash(salt, "identity", i)) for i in (ANN, CRM, COOKIE)}
    expected |= {("record", erasure_hash(salt, "record", r)) for r in ("r-ann", "r-crm")}
    assert erased == expected
    assert ("identity", erasure_hash(salt, "identity", BOB)) not in erased


def test_an_identity_never_seen_keeps_only_its_own_hash(fixed) -> None:
    salt = fixed["salt"]
    erased = [row for row in fixed["erased"] if row["request_id"] == "r-never"]
    assert [(row["kind"], row["hash"]) for row in erased] == [
        ("identity", erasure_hash(salt, "identity", "email:never@example.com"))
    ]


def test_a_repeated_request_id_changes_nothing_and_a_second_run_fixes_nothing(fixed) -> None:
    events = {
        (row["request_id"], row["event"], row["identities_erased"]) for row in fixed["events"]
    }
    assert events == {("r-ann", "fixed", 3), ("r-never", "fixed", 0), ("r-ann", "repeated", None)}
    assert fixed["second"] == []
    # the repeat named bob: nothing of his is erased
    assert len(fixed["erased"]) == 6


def test_the_build_handles_each_request_line_once_and_shows_it(fixed) -> None:
    shown = {(row["request_id"], row["event"]) for row in fixed["applications"]}
    assert shown == {("r-ann", "fixed"), ("r-never", "fixed"), ("r-ann", "repeated")}
    assert len(fixed["events"]) == 3  # the builds after it handled nothing again


def test_no_file_of_the_control_tables_names_an_identity(fixed) -> None:
    assert fixed["commits"] == {}


def test_the_subjects_records_are_deleted_with_an_erasure_notification(fixed) -> None:
    records = {row["record_id"]: row for row in fixed["after_erasure"]["records"]}
    assert set(records) == {"r-bob"}
    notified = [
        (row["record_id"], row["change_type"], row["reason"])
        for row in fixed["after_erasure"]["notifications"]
        if row["reason"] is not None
    ]
    assert sorted(notified) == [("r-ann", "delete", "erasure"), ("r-crm", "delete", "erasure")]


def test_a_line_landed_after_the_request_changes_what_it_would_have_before(fixed) -> None:
    """r-late (primary crm) and r-ann (an erased record_id) are erased lines; r-bob-2 keeps
    its line without the erased related identity."""
    records = {row["record_id"]: row for row in fixed["records"]}
    assert set(records) == {"r-bob", "r-bob-2"}
    assert records["r-bob-2"]["related_ids"] == []
    late = [row for row in fixed["notifications"] if row["record_id"] in ("r-late", "r-ann")]
    # r-ann's insert by the first build and delete by the erasure; nothing after them
    assert sorted((row["record_id"], row["change_type"]) for row in late) == [
        ("r-ann", "delete"),
        ("r-ann", "insert"),
    ]


def test_each_change_is_notified_once(fixed) -> None:
    keys = [(row["record_id"], row["ingest_batch_id"]) for row in fixed["notifications"]]
    assert len(keys) == len(set(keys))


def test_no_output_or_intermediate_table_names_the_subject(fixed) -> None:
    assert fixed["naming_the_subject"] == {}
    # bob's rows are there: the scan finds what it looks for
    assert {"records", "identity_map", "profile_identities"} <= set(fixed["naming_bob"])


def test_erasure_requests_shows_each_applied_request_with_the_files_naming_the_person(
    fixed,
) -> None:
    requests = {row["request_id"]: row for row in fixed["requests"]}
    assert set(requests) == {"r-ann", "r-never"}
    ann = requests["r-ann"]
    assert (ann["identities_erased"], ann["records_erased"], ann["repeated_lines"]) == (3, 2, 1)
    request_files = [name for name in ann["landing_files"] if name.startswith("erasures/")]
    assert len(request_files) == 1
    assert set(ann["landing_files"]) - set(request_files) == {
        "records/part-1.jsonl",
        "id_mutations/part-1.jsonl",
        "entity_names/part-1.jsonl",
    }
    (before,) = [row for row in fixed["after_erasure"]["requests"] if row["request_id"] == "r-ann"]
    assert before["purged_at"] is None
    assert (before["purge_due_at"] - before["applied_at"]).total_seconds() == 168 * 3600


def test_a_run_past_the_purge_horizon_purges_the_lake_at_its_end(fixed) -> None:
    assert len(fixed["purges"]) == 1
    assert all(row["purged_at"] is not None for row in fixed["requests"])
    # the purge deleted the records' superseded versions, which held what the erasure removed
    assert fixed["state_versions"]
    assert not [v for v in fixed["state_versions"] if any(s in v for s in SUBJECT_VALUES)]


def test_the_staged_lines_of_the_person_are_erased_rows_counted_as_erased(fixed) -> None:
    """part-1: r-ann, r-crm and the quarantined r-bad are the person's; r-bob is accepted and
    the quarantined r-bob-bad only relates to her. part-2: r-late and r-ann are hers."""
    first, second = (
        fixed["accounting"]["records/part-1.jsonl"],
        fixed["accounting"]["records/part-2.jsonl"],
    )
    counted = ("lines_landed", "lines_accepted", "lines_quarantined", "lines_erased")
    assert tuple(first[name] for name in counted) == (5, 1, 1, 3)
    assert tuple(second[name] for name in counted) == (3, 1, 0, 2)
    erased = [row for row in fixed["landing_records"] if row["is_erased"]]
    assert len(erased) == 5
    assert all(row["line"] is None for row in erased)
    # the quarantined line relating to her keeps its problem, without her identity
    (related,) = {row["line"] for row in fixed["errors"] if BOB in (row["line"] or "")}
    assert json.loads(related)["related_ids"] == []
    assert {row["line_number"] for row in fixed["errors"]} == {5}


def test_a_landed_line_relating_to_the_person_keeps_every_other_byte(fixed) -> None:
    (landed,) = [
        row["line"]
        for row in fixed["landing_records"]
        if row["source_file"] == "records/part-2.jsonl" and row["line_number"] == 3
    ]
    assert landed == record("r-bob-2", BOB, [ANN]).replace(json.dumps([ANN]), "[]")


def test_erasure_requests_counts_the_rows_removed_per_table(fixed) -> None:
    (ann,) = [row for row in fixed["requests"] if row["request_id"] == "r-ann"]
    assert ann["rows_removed"] == {
        "landing.records": 5,
        "stg_records__changes": 5,
        "ingest_errors": 1,
        "landing.id_mutations": 1,
        "stg_id_mutations__renames": 1,
        "landing.entity_names": 1,
        "stg_entity_names__updates": 1,
    }


def test_after_the_purge_no_file_of_the_lake_holds_the_person(fixed) -> None:
    assert fixed["purged_files"]["subject"] == {}
    # bob's data is still there: the scan finds what it looks for
    assert fixed["purged_files"]["bob"]


def test_a_full_refresh_after_the_erasure_gives_the_same_tables(fixed) -> None:
    assert fixed["after_full_refresh"] == fixed["before_full_refresh"]
