"""Hostile landing input (SPEC.md sections 2 and 3): the corpus of hostile_corpus.py, breaking
every rule of section 2 and then some, every bad line next to a good one, lands before the small
lake's first build (conftest.py). The build must succeed; each bad line is quarantined with
exactly its codes; each good line is accepted and reaches the outputs; and per file, lines
landed = accepted + quarantined.

The lake's other scenarios have tenants and landing files of their own, and the tests read the
corpus's rows only: a line's by its file, a record's or a profile's by its tenant. The lake's
later runs land no line of the corpus, so its rows are as the first build left them, until the
last test replaces them by a full refresh."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from pytests.integration.small_lake.hostile_corpus import SQL_TEXTS, LandingFile, corpus_files
from pytests.integration.small_lake.landings import BACKFILL_TENANT, SKIPPING_TENANTS
from pytests.support.expected import expected_records

pytestmark = pytest.mark.integration

# the tenants of the lake's other scenarios: no line of the corpus is theirs
OTHER_TENANTS = frozenset((*SKIPPING_TENANTS, BACKFILL_TENANT))


def of_corpus(row: dict, files: set[str]) -> bool:
    """Whether a row is the corpus's: a line's row by its file, another by its tenant."""
    if "source_file" in row:
        return row["source_file"] in files
    return row["tenant_id"] not in OTHER_TENANTS


@pytest.fixture(scope="module")
def corpus_rows(rows, hostile_corpus) -> Callable[[str], list[dict]]:
    """rows(sql), the corpus's rows only: the query selects source_file or tenant_id."""
    files = corpus_files(hostile_corpus)

    def fetch(sql: str) -> list[dict]:
        return [row for row in rows(sql) if of_corpus(row, files)]

    return fetch


def expected_codes(corpus: list[LandingFile]) -> dict[tuple[str, int], Counter]:
    return {
        (landing_file.name, number): Counter(codes)
        for landing_file in corpus
        for number, codes in landing_file.expected().items()
        if codes
    }


def expected_good(corpus: list[LandingFile], stream: str) -> set[tuple[str, int]]:
    return {
        (landing_file.name, number)
        for landing_file in corpus
        if landing_file.name.startswith(stream + "/")
        for number, codes in landing_file.expected().items()
        if not codes
    }


def test_the_build_succeeds_on_hostile_input(small_lake) -> None:
    """Every node of the lake's first build succeeds, data tests and dbt's unit tests included
    (the other scenarios' first files land with the corpus)."""
    statuses = small_lake.runs["first"].statuses()
    assert statuses, "dbt build ran no node"
    failed = {
        name: status for name, status in statuses.items() if status not in ("success", "pass")
    }
    assert not failed


def test_every_bad_line_is_quarantined_with_exactly_its_codes(
    small_lake, hostile_corpus, corpus_rows
) -> None:
    found: dict[tuple[str, int], Counter] = {}
    for row in corpus_rows(
        f"select source_file, line_number, error_code from {small_lake.table('ingest_errors')}"
    ):
        key = (row["source_file"], row["line_number"])
        found.setdefault(key, Counter())[row["error_code"]] += 1
    expected = expected_codes(hostile_corpus)
    why = {
        (landing_file.name, number): line.why
        for landing_file in hostile_corpus
        for number, line in enumerate(landing_file.lines, start=1)
    }
    wrong = {
        key: {"why": why.get(key), "expected": dict(expected.get(key, {})), "found": dict(codes)}
        for key in expected.keys() | found.keys()
        if found.get(key) != expected.get(key)
        for codes in [found.get(key, Counter())]
    }
    assert not wrong


def test_errors_name_the_stage_field_and_rule_and_keep_the_line(small_lake, corpus_rows) -> None:
    """Every error keeps its line, but for a line of `erasures/`, whose text is never kept
    (SPEC.md section 7)."""
    errors = corpus_rows(
        "select source_file, tenant_id, stream, stage, error_code, field, error_message, line, "
        f"ingest_batch_id from {small_lake.table('ingest_errors')}"
    )
    assert errors
    for error in errors:
        assert error["stream"] in {"records", "id_mutations", "entity_names", "erasures"}
        # what could be read of the tenant ("" is read as ""), else ~unreadable
        assert error["tenant_id"] is not None and error["ingest_batch_id"] is not None
        assert error["error_message"]
        assert (error["line"] is None) == (error["stream"] == "erasures"), error
        if error["stage"] == "parse":
            assert error["field"] is None
        else:
            assert error["error_message"].startswith(error["field"] + ":"), error
    five_mb = [error for error in errors if len(error["line"] or "") > 5_000_000]
    assert [error["error_code"] for error in five_mb] == ["payload_too_large"]


@pytest.mark.parametrize(
    ("stream", "model"),
    [
        ("records", "stg_records__changes"),
        ("id_mutations", "stg_id_mutations__renames"),
        ("entity_names", "stg_entity_names__updates"),
        ("erasures", "stg_erasures__requests"),
    ],
)
def test_every_good_line_is_accepted(
    small_lake, hostile_corpus, corpus_rows, stream, model
) -> None:
    accepted = {
        (row["source_file"], row["line_number"])
        for row in corpus_rows(
            f"select source_file, line_number from {small_lake.table(model, 'staging')} "
            "where is_accepted"
        )
    }
    assert accepted == expected_good(hostile_corpus, stream)


@contextmanager
def recursion_limit(limit: int) -> Iterator[None]:
    """Python's own limit (1000) is too low for payloads nested MAX_DEPTH levels."""
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(max(saved, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(saved)


def test_good_records_reach_records_unchanged(small_lake, hostile_corpus, corpus_rows) -> None:
    fetched = corpus_rows(
        f"select tenant_id, record_id, payload from {small_lake.table('records')}"
    )
    with recursion_limit(10_000):
        messages = [
            json.loads(line.raw)
            for landing_file in hostile_corpus
            if landing_file.name.startswith("records/")
            for line in landing_file.lines
            if not line.codes
        ]
        for message in messages:  # the oracle's parser reads upper-case T and Z only
            message["event_ts"] = message["event_ts"].upper()
        expected = expected_records(messages)
        found = {
            (row["tenant_id"], row["record_id"]): json.loads(row["payload"]) for row in fetched
        }
        assert found.keys() == expected.keys()
        assert found == expected
    for text in SQL_TEXTS:
        assert ("acme", text) in found


def test_landed_lines_are_accepted_or_quarantined_per_file(
    small_lake, hostile_corpus, corpus_rows
) -> None:
    accounting = {
        row["source_file"]: row
        for row in corpus_rows(f"select * from {small_lake.table('ingest_file_accounting')}")
    }
    expected = {
        landing_file.name: landing_file.expected()
        for landing_file in hostile_corpus
        if landing_file.expected()
    }
    assert accounting.keys() == expected.keys(), "every non-empty landing file, and only those"
    for name, lines in expected.items():
        counted = accounting[name]
        assert counted["lines_landed"] == len(lines), name
        assert counted["lines_accepted"] == sum(1 for codes in lines.values() if not codes), name
        assert counted["lines_quarantined"] == sum(1 for codes in lines.values() if codes), name
        assert counted["lines_landed"] == counted["lines_accepted"] + counted["lines_quarantined"]


def test_each_landing_line_is_staged_once(small_lake, hostile_corpus, corpus_rows) -> None:
    staged = Counter()
    for stream in ("records", "id_mutations", "entity_names", "erasures"):
        for row in corpus_rows(
            f"select source_file, line_number from {small_lake.table(stream, 'landing')}"
        ):
            staged[(row["source_file"], row["line_number"])] += 1
    expected = {
        (landing_file.name, number)
        for landing_file in hostile_corpus
        for number in landing_file.expected()
    }
    assert set(staged) == expected
    assert set(staged.values()) == {1}


# what a full refresh must rebuild as it was
REBUILT_AS_THEY_WERE = {
    "records": ["tenant_id", "record_id", "payload"],
    "ingest_errors": ["source_file", "line_number", "error_code"],
    "ingest_file_accounting": [
        "source_file",
        "lines_landed",
        "lines_accepted",
        "lines_quarantined",
    ],
    "profile_identities": ["tenant_id", "identity_id", "profile_id"],
}


def test_a_full_refresh_rebuilds_the_lake_as_it_was(small_lake, corpus_rows) -> None:
    """`dbt build --full-refresh` (docs/settings.md) of a built lake: every node succeeds, tests
    included; the outputs come out as they were, and record_notifications starts over with one
    insert per record (Delta refuses to replace its append-only table unless the property is
    lifted first). The small lake's last run (conftest.py), last in this module: it replaces
    the tables the tests above read (the other modules read what the fixture recorded)."""

    def contents() -> dict[str, Counter]:
        return {
            table: Counter(
                tuple(row[column] for column in columns)
                for row in corpus_rows(
                    f"select {', '.join(columns)} from {small_lake.table(table)}"
                )
            )
            for table, columns in REBUILT_AS_THEY_WERE.items()
        }

    before = contents()
    statuses = small_lake.dbt(["build", "--full-refresh"]).statuses()
    failed = {
        name: status for name, status in statuses.items() if status not in ("success", "pass")
    }
    assert statuses and not failed
    assert contents() == before
    notified = Counter(
        (row["tenant_id"], row["record_id"], row["change_type"])
        for row in corpus_rows(
            "select tenant_id, record_id, change_type "
            f"from {small_lake.table('record_notifications')}"
        )
    )
    records = before["records"]
    assert notified == Counter({(tenant, record, "insert"): 1 for tenant, record, _ in records})
