"""Erasure (SPEC.md section 7) on one lake of two tenants, five whole builds.

acme, a request landing after the person's data: the next build fixes the subject from the
tables the first one built (int_erasure_applications): the named identity's profile with every
identity renamed into it and the records of any of them, kept only as hashes salted per tenant,
not crossing a link a rule cut; an identity never seen erases only itself; a repeated
request_id changes nothing; no commit names an identity; the staged lines are rewritten (erased
rows in landing and staging, ingest_errors rows deleted, related ids dropped from the landed
text), the accounting counts them as erased, lines landing later change what they would have
before, a run past the purge horizon leaves no file holding the person, and a full refresh
afterwards gives the same tables.

globex, the `erasures/` stream itself: a request landed by `profile-lake forget` in the same
batch as the person's record, and four bad request lines. A request's identity is kept only as
its salted hash, no line of the stream is kept as text (not in ingest_errors, which keeps its
problems, nor in the landing table once staged), every tenant with a staged request gets one
salt that a later run never replaces, the accounting balances for the stream; after the purge
the older files holding the bad lines' text are gone, and a whole build reads across it.

Builds: 1. both tenants' data, globex's requests (then a full refresh of the requests' staging
model alone); 2. acme's requests; 3. acme's later lines, purge horizon 0 hours (the run's end
purges the lake); 4. a request of globex's, after the purge; 5. a full refresh, the only build
with the data tests: every model and data test passes on the lake the scenarios left."""

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
# two hub records linking ANN and 100 cookies (related_ids hold at most 100): with the default
# rule (max_identities 100), r-hub-2's links come first (the larger record_id), then r-hub's in
# the order of their larger identity, which fill the hub's profile before x050; the links to
# x050 and to ANN are cut
HUB = "cookie:hub"
HUB_COOKIES = [f"cookie:x{n:03d}" for n in range(1, 101)]
HUB_RELATED, HUB_2_RELATED = [ANN, *HUB_COOKIES[:50]], HUB_COOKIES[50:]
# globex: a person whose request lands with her record, and another whose record relates to her
GIA, ZED = "email:gia@example.com", "email:zed@example.com"


def record(
    record_id: str,
    primary_id: str,
    related: list[str] | None = None,
    op: str = "upsert",
    tenant_id: str = "acme",
) -> str:
    return json.dumps(
        {
            "tenant_id": tenant_id,
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


def request_line(tenant_id: str, request_id: str, identity: str) -> str:
    return json.dumps(
        {"tenant_id": tenant_id, "request_id": request_id, "identity": identity, "requested_ts": TS}
    )


SUBJECT_VALUES = [ANN, CRM, COOKIE, "Ann"]
# quarantined lines (an op out of its rule): one of the person's, one relating to her
BAD_OWN, BAD_RELATED = record("r-bad", ANN, op="nope"), record("r-bob-bad", BOB, [ANN], op="nope")
BAD_REQUESTS = [
    request_line("globex", "g-r2", "fax:bob-555"),  # identity out of its rule
    request_line("globex", "", "email:cy@example.com"),  # request_id out of its rule
    '{"tenant_id": "globex", "identity": "email:dee@example.com"',  # not JSON
    request_line("nobody", "g-r5", "phone:+4455"),  # a tenant of no tenants seed
]
BAD_REQUEST_VALUES = ("bob-555", "cy@example.com", "dee@example.com", "+4455")
# tables compared before and after the full refresh
KEPT_BY_FULL_REFRESH = ("records", "identity_map", "entity_names", "ingest_file_accounting")
AT = datetime(2026, 12, 1, 10, tzinfo=UTC)
# Builds 1 to 4 leave the data tests out; the last build, a whole full refresh, runs every
# model and every data test on the lake as the scenarios left it.
BUILD = ["build", "--exclude", "resource_type:test"]


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


def lake_files(lake_home: Path) -> list[Path]:
    """The folders of this lake under the shared PROFILE_LAKE_HOME: its schemas' tables, its
    checkpoints and run states (dbt's target folder is not the lake's, docs/erasure.md)."""
    return [
        *(lake_home / "warehouse").glob(f"{SCHEMA}*.db"),
        *lake_home.glob(f"checkpoints/*/{SCHEMA}*"),
        *lake_home.glob(f"run_state/{SCHEMA}*"),
    ]


def land_first_lines(landing: Path) -> str:
    """Both tenants' first lines; returns the landing name of globex's request."""
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
                record("r-hub", HUB, HUB_RELATED),
                record("r-hub-2", HUB, HUB_2_RELATED),
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
    (landing / "records" / "globex-1.jsonl").write_text(
        record("g-a1", GIA, tenant_id="globex")
        + "\n"
        + record("g-z1", ZED, [GIA], "upsert", "globex")
        + "\n"
    )
    landed = land_request(forget_request("globex", GIA, "g-r1", AT), landing)
    (landing / "erasures" / "bad-1.jsonl").write_text("".join(line + "\n" for line in BAD_REQUESTS))
    return "erasures/" + landed.name


@pytest.fixture(scope="module")
def fixed(spark, lake_home: Path, tmp_path_factory, lake_builder, rows) -> dict:
    landing = tmp_path_factory.mktemp("erasure-subject-landing")
    forget_file = land_first_lines(landing)
    built = lake_builder(lake_home, SCHEMA, landing, build_args=BUILD)
    stream = {
        "forget_file": forget_file,
        "first_salts": {
            row["tenant_id"]: bytes(row["salt"])
            for row in rows(f"select tenant_id, salt from {SCHEMA}_control.erasure_salts")
        },
        "staged_before_full_refresh": rows(
            f"select * from {SCHEMA}_staging.stg_erasures__requests"
        ),
    }
    built.dbt(["run", "--full-refresh", "--select", "stg_erasures__requests"])
    stream |= {
        "landing": rows(f"select * from {SCHEMA}_landing.erasures"),
        "staged": rows(f"select * from {SCHEMA}_staging.stg_erasures__requests"),
        "staged_columns": [
            field.name for field in spark.table(f"{SCHEMA}_staging.stg_erasures__requests").schema
        ],
        "errors": rows(f"select * from {SCHEMA}.ingest_errors where stream = 'erasures'"),
        "accounting": rows(
            f"select * from {SCHEMA}.ingest_file_accounting where stream = 'erasures'"
        ),
        # the cleared text is still in the landing table's older files
        "before_purge": files_holding(lake_files(lake_home), BAD_REQUEST_VALUES),
    }
    exclusions_before = rows(f"select * from {SCHEMA}.identity_link_exclusions")
    # the requests land after the person's data: the next build fixes their subjects from
    # the tables the first one built
    land_request(forget_request("acme", COOKIE, "r-ann", AT), landing)
    land_request(forget_request("acme", "email:never@example.com", "r-never", AT), landing)
    # the same request_id again, naming bob, later in the batch (lines are taken in the order
    # of batch, file and line): it changes nothing
    (landing / "erasures" / "zz-repeat.jsonl").write_text(request_line("acme", "r-ann", BOB) + "\n")
    built.dbt(BUILD)
    applications = rows(
        f"select * from {SCHEMA}_intermediate.int_erasure_applications where tenant_id = 'acme'"
    )
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
        "requests": rows(f"select * from {SCHEMA}.erasure_requests where tenant_id = 'acme'"),
        "notifications": rows(
            f"select * from {SCHEMA}.record_notifications where tenant_id = 'acme'"
        ),
        "exclusions": rows(f"select * from {SCHEMA}.identity_link_exclusions"),
    }
    # lines naming the erased after the request: they change nothing. A purge horizon of 0
    # hours: the run's end purges the lake (the next whole build shows it purged)
    (landing / "records" / "part-2.jsonl").write_text(
        "\n".join([record("r-late", CRM), record("r-ann", BOB), record("r-bob-2", BOB, [ANN])])
        + "\n"
    )
    built.dbt([*BUILD, "--vars", json.dumps({"erasure_purge_hours": 0})])
    try:
        spark.sql(f"select count(*) from {SCHEMA}_landing.erasures version as of 0").collect()
        old_version_read = True
    except Exception:  # the history before the purge is gone
        old_version_read = False
    purged = {
        "events": rows(f"select * from {SCHEMA}_control.purge_events"),
        "state_versions": [
            row["version"]
            for row in rows(
                f"select to_json(struct(*)) as version from "
                f"{SCHEMA}_intermediate.int_record_states where tenant_id = 'acme'"
            )
        ],
        "subject": files_holding(lake_files(lake_home), SUBJECT_VALUES),
        "bob": files_holding(lake_files(lake_home), [BOB]),
        "bad_requests": files_holding(lake_files(lake_home), BAD_REQUEST_VALUES),
        "old_version_read": old_version_read,
        "landing_requests": rows(
            f"select source_file, line_number, line from {SCHEMA}_landing.erasures"
        ),
    }
    # a request after the purge: the build's change-feed reads (ingest_file_accounting and
    # the marts read their inputs' feeds) go across it
    later = forget_request(
        "globex", "email:later@example.com", "g-r9", datetime(2026, 12, 2, tzinfo=UTC)
    )
    later_file = "erasures/" + land_request(later, landing).name
    after_purge = built.dbt(BUILD)
    stream |= {
        "statuses": after_purge.statuses(),
        "requests": rows(
            f"select request_id from {SCHEMA}_staging.stg_erasures__requests "
            "where is_accepted and tenant_id = 'globex'"
        ),
        "later_accounting": rows(
            "select lines_landed, lines_accepted from "
            f"{SCHEMA}.ingest_file_accounting where source_file = '{later_file}'"
        ),
        "records": rows(f"select * from {SCHEMA}.records where tenant_id = 'globex'"),
    }
    before_full_refresh = kept_tables(rows)
    notifications = rows(f"select * from {SCHEMA}.record_notifications where tenant_id = 'acme'")
    built.dbt(["build", "--full-refresh"])
    salts = {
        row["tenant_id"]: bytes(row["salt"])
        for row in rows(f"select tenant_id, salt from {SCHEMA}_control.erasure_salts")
    }
    return {
        "built": built,
        "stream": stream | {"salts": salts},
        "applications": applications,
        "second": second,
        "salt": salts["acme"],
        "erased": rows(
            f"select request_id, kind, hash from {tables.erased_set} where tenant_id = 'acme'"
        ),
        "events": rows(f"select * from {tables.events} where tenant_id = 'acme'"),
        "exclusions_before": exclusions_before,
        "after_erasure": after_erasure,
        "records": rows(f"select * from {SCHEMA}.records where tenant_id = 'acme'"),
        "naming_the_subject": tables_naming(spark, SUBJECT_VALUES),
        "requests": rows(f"select * from {SCHEMA}.erasure_requests where tenant_id = 'acme'"),
        "naming_bob": tables_naming(spark, [BOB]),
        "purged": purged,
        "notifications": notifications,
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


def test_the_subject_does_not_cross_a_link_a_rule_cut(fixed) -> None:
    """r-hub relates to ANN, but a rule (max_identities) cut that link: the hub's identities
    and record are not erased; its record loses ANN from related_ids (an update), and the cut
    link's exclusion row goes while the other one stays."""
    salt = fixed["salt"]
    erased = {row["hash"] for row in fixed["erased"]}
    assert not {erasure_hash(salt, "identity", i) for i in (HUB, *HUB_COOKIES)} & erased
    assert erasure_hash(salt, "record", "r-hub") not in erased

    def cut(rows: list[dict]) -> set[tuple[str, str, str]]:
        return {
            (row["smaller_identity_id"], row["larger_identity_id"], row["rule"])
            for row in rows
            if row["tenant_id"] == "acme"
        }

    hub_to_last = (HUB, HUB_COOKIES[49], "max_identities")
    assert cut(fixed["exclusions_before"]) == {hub_to_last, (HUB, ANN, "max_identities")}
    assert cut(fixed["after_erasure"]["exclusions"]) == {hub_to_last}
    records = {row["record_id"]: row for row in fixed["after_erasure"]["records"]}
    assert records["r-hub"]["related_ids"] == HUB_COOKIES[:50]
    hub_changes = [
        row["change_type"]
        for row in fixed["after_erasure"]["notifications"]
        if row["record_id"] == "r-hub"
    ]
    assert sorted(hub_changes) == ["insert", "update"]


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
    assert set(records) == {"r-bob", "r-hub", "r-hub-2"}
    notified = [
        (row["record_id"], row["change_type"], row["reason"])
        for row in fixed["after_erasure"]["notifications"]
        if row["reason"] is not None
    ]
    # r-hub only related to her: an update, for the same reason
    assert sorted(notified) == [
        ("r-ann", "delete", "erasure"),
        ("r-crm", "delete", "erasure"),
        ("r-hub", "update", "erasure"),
    ]


def test_a_line_landed_after_the_request_changes_what_it_would_have_before(fixed) -> None:
    """r-late (primary crm) and r-ann (an erased record_id) are erased lines; r-bob-2 keeps
    its line without the erased related identity."""
    records = {row["record_id"]: row for row in fixed["records"]}
    assert set(records) == {"r-bob", "r-bob-2", "r-hub", "r-hub-2"}
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
    assert len(fixed["purged"]["events"]) == 1
    assert all(row["purged_at"] is not None for row in fixed["requests"])
    # the purge deleted the records' superseded versions, which held what the erasure removed
    versions = fixed["purged"]["state_versions"]
    assert versions
    assert not [v for v in versions if any(s in v for s in SUBJECT_VALUES)]


def test_the_staged_lines_of_the_person_are_erased_rows_counted_as_erased(fixed) -> None:
    """part-1: r-ann, r-crm and the quarantined r-bad are the person's; r-bob and the hub
    records are accepted, and the quarantined r-bob-bad only relates to her. part-2: r-late
    and r-ann are hers."""
    first, second = (
        fixed["accounting"]["records/part-1.jsonl"],
        fixed["accounting"]["records/part-2.jsonl"],
    )
    counted = ("lines_landed", "lines_accepted", "lines_quarantined", "lines_erased")
    assert tuple(first[name] for name in counted) == (7, 3, 1, 3)
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
    assert fixed["purged"]["subject"] == {}
    # bob's data is still there: the scan finds what it looks for
    assert fixed["purged"]["bob"]


def test_a_full_refresh_after_the_erasure_gives_the_same_tables(fixed) -> None:
    assert fixed["after_full_refresh"] == fixed["before_full_refresh"]


# ---------- globex: the `erasures/` stream, a request landing with the person's record


def test_the_request_is_accepted_and_keeps_only_the_hash_of_its_identity(fixed) -> None:
    stream = fixed["stream"]
    assert "identity" not in stream["staged_columns"]
    (accepted,) = [row for row in stream["staged"] if row["is_accepted"]]
    assert accepted["source_file"] == stream["forget_file"]
    assert (accepted["tenant_id"], accepted["request_id"]) == ("globex", "g-r1")
    # Spark's hash of the staged identity is Python's erasure_hash with the tenant's salt
    assert accepted["identity_hash"] == erasure_hash(stream["salts"]["globex"], "identity", GIA)
    assert accepted["requested_ts"] == datetime(2026, 12, 1, 10)


def test_no_line_text_or_plain_identity_is_kept_in_staging_or_ingest_errors(fixed) -> None:
    stream = fixed["stream"]
    assert len(stream["staged"]) == 1 + len(BAD_REQUESTS)
    assert all(row["line"] is None for row in stream["staged"] + stream["errors"])
    for row in stream["staged"] + stream["errors"]:
        text = repr(row)
        assert not [value for value in (GIA, *BAD_REQUEST_VALUES) if value in text], row


def test_the_landing_table_keeps_no_request_text_once_staged(fixed) -> None:
    landed = fixed["stream"]["landing"]
    assert len(landed) == 1 + len(BAD_REQUESTS)
    assert all(row["line"] is None for row in landed)
    assert all(row["line_bytes"] > 0 for row in landed)


def test_a_full_refresh_of_a_selection_keeps_the_requests(fixed) -> None:
    """The landing table has no text to rebuild the requests from: a full refresh of a
    selection keeps them as they were (a whole one stages the landing files again)."""
    stream = fixed["stream"]
    assert stream["staged"] == stream["staged_before_full_refresh"]


def test_the_problems_of_bad_requests_are_kept(fixed) -> None:
    stream = fixed["stream"]
    codes = {(row["error_code"], row["field"]) for row in stream["errors"]}
    assert {
        ("invalid_identity", "identity"),
        ("invalid_request_id", "request_id"),
        ("invalid_json", None),
        ("unknown_tenant", "tenant_id"),
    } <= codes
    assert all(row["identity_hash"] is None for row in stream["staged"] if not row["is_accepted"])


def test_the_accounting_balances_for_the_stream(fixed) -> None:
    stream = fixed["stream"]
    files = {row["source_file"]: row for row in stream["accounting"]}
    assert set(files) == {stream["forget_file"], "erasures/bad-1.jsonl"}
    forget, bad = files[stream["forget_file"]], files["erasures/bad-1.jsonl"]
    counted = ("lines_landed", "lines_accepted", "lines_quarantined")
    assert tuple(forget[name] for name in counted) == (1, 1, 0)
    assert tuple(bad[name] for name in counted) == (4, 0, 4)


def test_each_requesting_tenant_gets_one_salt_that_is_never_replaced(fixed) -> None:
    stream = fixed["stream"]
    # every readable tenant of a staged line, known to the seed or not; no `~unreadable`
    assert set(stream["first_salts"]) == {"globex", "nobody"}
    assert set(stream["salts"]) == {"acme", "globex", "nobody"}
    assert all(len(salt) == 32 for salt in stream["salts"].values())
    assert len(set(stream["salts"].values())) == 3
    # neither the later builds nor the full refresh replaced them
    assert {tenant: stream["salts"][tenant] for tenant in stream["first_salts"]} == stream[
        "first_salts"
    ]


def test_a_request_landing_with_the_persons_record_leaves_nothing_of_it_in_records(
    fixed,
) -> None:
    """The request and the person's record landed in one batch: the record never reached
    `records`, and the other person's record keeps no link to the erased identity."""
    records = fixed["stream"]["records"]
    assert [(row["record_id"], row["related_ids"]) for row in records] == [("g-z1", [])]
    counted = ("lines_landed", "lines_accepted", "lines_quarantined", "lines_erased")
    globex = fixed["accounting"]["records/globex-1.jsonl"]
    assert tuple(globex[name] for name in counted) == (2, 1, 0, 1)


def test_the_purge_leaves_no_file_holding_what_the_tables_no_longer_hold(fixed) -> None:
    # the bad requests' text was in the landing table's older files before the purge
    before = fixed["stream"]["before_purge"]
    assert any("_landing.db" in path for path in before), before
    assert fixed["purged"]["bad_requests"] == {}


def test_after_the_purge_the_current_version_reads_and_the_old_history_does_not(
    fixed,
) -> None:
    landed = fixed["purged"]["landing_requests"]
    assert len(landed) >= len(fixed["stream"]["landing"])
    assert all(row["line"] is None for row in landed)
    assert not fixed["purged"]["old_version_read"]


def test_a_build_after_the_purge_passes_and_stages_new_requests(fixed) -> None:
    stream = fixed["stream"]
    failed = {
        name: status
        for name, status in stream["statuses"].items()
        if status not in ("success", "pass")
    }
    assert stream["statuses"] and not failed
    assert {row["request_id"] for row in stream["requests"]} == {"g-r1", "g-r9"}
    # ingest_file_accounting reads the staging models' change feeds, across the purge
    assert stream["later_accounting"] == [{"lines_landed": 1, "lines_accepted": 1}]


def test_a_checkpoint_from_before_the_erasures_stream_lists_no_file_again(
    spark, tmp_path: Path, monkeypatch
) -> None:
    """The ingest's file source reads `<landing>/{records,...}`: adding `erasures` to the glob
    of an existing checkpoint stages the new stream's files and none of those staged before
    (the source's seen files are restored from the checkpoint by path, not by glob)."""
    import profile_lake.ingest.lines as lines
    import profile_lake.ingest.staging as staging
    from profile_lake.project import tenant_id_pattern

    landing = tmp_path / "landing"
    for stream in ("records", "id_mutations", "entity_names", "erasures"):
        (landing / stream).mkdir(parents=True)
    (landing / "records" / "part-1.jsonl").write_text('{"tenant_id": "acme"}\n')
    (landing / "erasures" / "early.jsonl").write_text(request_line("acme", "r0", ANN) + "\n")
    settings = staging.IngestSettings(
        str(landing),
        "erasure_checkpoint_landing",
        str(tmp_path / "checkpoint"),
        tenant_id_pattern(),
    )
    before = ("records", "id_mutations", "entity_names")
    with monkeypatch.context() as patched:
        patched.setattr(staging, "STREAMS", before)
        patched.setattr(lines, "STREAMS", before)
        first = staging.ingest_landing(spark, settings, progress=lambda _: None)
    assert [report.lines_by_stream for report in first] == [{"records": 1}]
    (landing / "records" / "part-2.jsonl").write_text('{"tenant_id": "acme"}\n')
    second = staging.ingest_landing(spark, settings, progress=lambda _: None)
    # the erasures file landed before the upgrade is new to the source; records' part-1 is not
    assert [report.lines_by_stream for report in second] == [{"records": 1, "erasures": 1}]
    staged = spark.sql("select source_file from erasure_checkpoint_landing.records").collect()
    assert sorted(row["source_file"] for row in staged) == [
        "records/part-1.jsonl",
        "records/part-2.jsonl",
    ]
