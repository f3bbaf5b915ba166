"""The `erasures/` landing stream, staged and validated (SPEC.md section 7; erasing nothing yet):
a request's identity is kept only as its salted hash, no line of the stream is kept as text
(not in ingest_errors, which keeps its problems, nor in the landing table once staged), every
tenant with a staged request gets one salt that a later run never replaces, and the accounting
balances for the stream.

One lake, two in-process builds of the staging and monitoring models: the first stages a
request landed by `profile-lake forget` and four bad request lines beside a record line; the
second lands nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from profile_lake.erasure.command import forget_request, land_request
from profile_lake.erasure.hashing import erasure_hash
from pytests.support.file_scan import files_holding

pytestmark = pytest.mark.integration

SCHEMA = "erasure_stream"
SELECTION = ["build", "--select", "+ingest_file_accounting"]
PERSON = "email:ann@example.com"
TS = "2026-12-01T10:00:00Z"


def request_line(tenant_id: str, request_id: str, identity: str) -> str:
    return json.dumps(
        {"tenant_id": tenant_id, "request_id": request_id, "identity": identity, "requested_ts": TS}
    )


# another person, whose record relates to PERSON
OTHER = "email:zed@example.com"
BAD_LINES = [
    request_line("acme", "r2", "fax:bob-555"),  # identity out of its rule
    request_line("acme", "", "email:cy@example.com"),  # request_id out of its rule
    '{"tenant_id": "acme", "identity": "email:dee@example.com"',  # not JSON
    request_line("nobody", "r5", "phone:+4455"),  # a tenant of no tenants seed
]
PLAIN_VALUES = ("ann@example.com", "bob-555", "cy@example.com", "dee@example.com", "+4455")


@pytest.fixture(scope="module")
def lake(spark, lake_home: Path, tmp_path_factory, lake_builder, rows) -> dict:
    landing = tmp_path_factory.mktemp("erasure-stream-landing")
    (landing / "records").mkdir()
    (landing / "records" / "part-1.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "tenant_id": "acme",
                    "record_id": record_id,
                    "op": "upsert",
                    "event_ts": TS,
                    "seq": 0,
                    "record_type": "profile",
                    "primary_id": primary_id,
                    "related_ids": related,
                    "payload": {"visits": 1},
                }
            )
            + "\n"
            for record_id, primary_id, related in (
                ("a1", PERSON, []),
                ("z1", OTHER, [PERSON]),
            )
        )
    )
    request = forget_request("acme", PERSON, "r1", datetime(2026, 12, 1, 10, tzinfo=UTC))
    landed = land_request(request, landing)
    (landing / "erasures" / "bad-1.jsonl").write_text("".join(line + "\n" for line in BAD_LINES))
    built = lake_builder(lake_home, SCHEMA, landing, run_history=True, build_args=SELECTION)
    first_salts = rows(f"select tenant_id, salt from {SCHEMA}_control.erasure_salts")
    built.dbt(SELECTION)
    staged_before = rows(f"select * from {SCHEMA}_staging.stg_erasures__requests")
    built.dbt(["run", "--full-refresh", "--select", "stg_erasures__requests"])
    return {
        "built": built,
        "landing": rows(f"select * from {SCHEMA}_landing.erasures"),
        "staged_before_full_refresh": staged_before,
        "forget_file": "erasures/" + landed.name,
        "staged": rows(f"select * from {SCHEMA}_staging.stg_erasures__requests"),
        "staged_columns": [
            field.name for field in spark.table(f"{SCHEMA}_staging.stg_erasures__requests").schema
        ],
        "errors": rows(f"select * from {SCHEMA}.ingest_errors where stream = 'erasures'"),
        "accounting": rows(
            f"select * from {SCHEMA}.ingest_file_accounting where stream = 'erasures'"
        ),
        "first_salts": {row["tenant_id"]: bytes(row["salt"]) for row in first_salts},
        "salts": {
            row["tenant_id"]: bytes(row["salt"])
            for row in rows(f"select tenant_id, salt from {SCHEMA}_control.erasure_salts")
        },
    }


def test_the_request_is_accepted_and_keeps_only_the_hash_of_its_identity(lake) -> None:
    assert "identity" not in lake["staged_columns"]
    (accepted,) = [row for row in lake["staged"] if row["is_accepted"]]
    assert accepted["source_file"] == lake["forget_file"]
    assert (accepted["tenant_id"], accepted["request_id"]) == ("acme", "r1")
    # Spark's hash of the staged identity is Python's erasure_hash with the tenant's salt
    assert accepted["identity_hash"] == erasure_hash(lake["salts"]["acme"], "identity", PERSON)
    assert accepted["requested_ts"] == datetime(2026, 12, 1, 10)


def test_no_line_text_or_plain_identity_is_kept_in_staging_or_ingest_errors(lake) -> None:
    assert len(lake["staged"]) == 1 + len(BAD_LINES)
    assert all(row["line"] is None for row in lake["staged"] + lake["errors"])
    for row in lake["staged"] + lake["errors"]:
        text = repr(row)
        assert not [value for value in PLAIN_VALUES if value in text], row


def test_the_landing_table_keeps_no_request_text_once_staged(lake) -> None:
    assert len(lake["landing"]) == 1 + len(BAD_LINES)
    assert all(row["line"] is None for row in lake["landing"])
    assert all(row["line_bytes"] > 0 for row in lake["landing"])


def test_a_full_refresh_of_a_selection_keeps_the_requests(lake) -> None:
    """The landing table has no text to rebuild the requests from: a full refresh of a
    selection keeps them as they were (a whole one stages the landing files again)."""
    assert lake["staged"] == lake["staged_before_full_refresh"]
    assert len(lake["staged"]) == 1 + len(BAD_LINES)


def test_the_problems_of_bad_requests_are_kept(lake) -> None:
    codes = {(row["error_code"], row["field"]) for row in lake["errors"]}
    assert {
        ("invalid_identity", "identity"),
        ("invalid_request_id", "request_id"),
        ("invalid_json", None),
        ("unknown_tenant", "tenant_id"),
    } <= codes
    assert all(row["identity_hash"] is None for row in lake["staged"] if not row["is_accepted"])


def test_the_accounting_balances_for_the_stream(lake) -> None:
    files = {row["source_file"]: row for row in lake["accounting"]}
    assert set(files) == {lake["forget_file"], "erasures/bad-1.jsonl"}
    forget, bad = files[lake["forget_file"]], files["erasures/bad-1.jsonl"]
    assert (forget["lines_landed"], forget["lines_accepted"], forget["lines_quarantined"]) == (
        1,
        1,
        0,
    )
    assert (bad["lines_landed"], bad["lines_accepted"], bad["lines_quarantined"]) == (4, 0, 4)


def test_each_requesting_tenant_gets_one_salt_that_is_never_replaced(lake) -> None:
    # every readable tenant of a staged line, known to the seed or not; no `~unreadable`
    assert set(lake["salts"]) == {"acme", "nobody"}
    assert all(len(salt) == 32 for salt in lake["salts"].values())
    assert lake["salts"]["acme"] != lake["salts"]["nobody"]
    assert lake["salts"] == lake["first_salts"]


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
    (landing / "erasures" / "early.jsonl").write_text(request_line("acme", "r0", PERSON) + "\n")
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


# ---------- the purge (docs/erasure.md): no file keeps what the tables no longer hold


def lake_files(lake_home: Path) -> list[Path]:
    """The folders of this lake under the shared PROFILE_LAKE_HOME: its schemas' tables, its
    checkpoints and run states (dbt's target folder is not the lake's, docs/erasure.md)."""
    return [
        *(lake_home / "warehouse").glob(f"{SCHEMA}*.db"),
        *lake_home.glob(f"checkpoints/*/{SCHEMA}*"),
        *lake_home.glob(f"run_state/{SCHEMA}*"),
    ]


@pytest.fixture(scope="module")
def purged(spark, lake: dict, lake_home: Path, rows) -> dict:
    """The lake above purged (`dbt run-operation purge_history`, what `profile-lake purge`
    runs), then one more file and a whole `dbt build`."""
    built = lake["built"]
    sentinels = PLAIN_VALUES[1:]  # the bad requests' identities: in the landing table's text
    before = files_holding(lake_files(lake_home), sentinels)
    built.dbt(["run-operation", "purge_history"])
    after = files_holding(lake_files(lake_home), sentinels)
    try:
        spark.sql(f"select count(*) from {SCHEMA}_landing.erasures version as of 0").collect()
        old_version_read = True
    except Exception:  # the history before the purge is gone
        old_version_read = False
    landing_rows = rows(f"select source_file, line_number, line from {SCHEMA}_landing.erasures")
    when = datetime(2026, 12, 2, tzinfo=UTC)
    later = forget_request("acme", "email:later@example.com", "r9", when)
    later_file = "erasures/" + land_request(later, built.landing).name
    build = built.dbt(["build"])
    return {
        "before": before,
        "after": after,
        "old_version_read": old_version_read,
        "landing_rows": landing_rows,
        "statuses": build.statuses(),
        "records": rows(f"select * from {SCHEMA}.records"),
        "requests": rows(
            f"select request_id from {SCHEMA}_staging.stg_erasures__requests where is_accepted"
        ),
        # ingest_file_accounting reads the staging models' change feeds, across the purge
        "later_accounting": rows(
            "select lines_landed, lines_accepted from "
            f"{SCHEMA}.ingest_file_accounting where source_file = '{later_file}'"
        ),
    }


def test_the_purge_leaves_no_file_holding_what_the_tables_no_longer_hold(purged) -> None:
    # the cleared text was still in the landing table's older files: the scan finds values
    assert any("_landing.db" in path for path in purged["before"]), purged["before"]
    assert purged["after"] == {}


def test_after_the_purge_the_current_version_reads_and_the_old_history_does_not(
    purged, lake
) -> None:
    assert len(purged["landing_rows"]) == len(lake["landing"])
    assert all(row["line"] is None for row in purged["landing_rows"])
    assert not purged["old_version_read"]


def test_a_whole_build_after_the_purge_passes_and_stages_new_requests(purged) -> None:
    failed = {
        name: status
        for name, status in purged["statuses"].items()
        if status not in ("success", "pass")
    }
    assert purged["statuses"] and not failed
    assert {row["request_id"] for row in purged["requests"]} == {"r1", "r9"}
    assert purged["later_accounting"] == [{"lines_landed": 1, "lines_accepted": 1}]


def test_a_request_landing_with_the_persons_data_leaves_nothing_of_it_in_records(
    purged,
) -> None:
    """The request and the person's record landed in one batch: the record never reached
    `records` (the whole build after the purge shows it), and the other person's record
    keeps no link to the erased identity."""
    assert [(row["record_id"], row["related_ids"]) for row in purged["records"]] == [("z1", [])]
