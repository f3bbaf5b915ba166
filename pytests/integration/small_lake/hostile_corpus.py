"""The hostile corpus (test_hostile_input.py): landing files breaking every rule of SPEC.md
section 2 and then some (invalid UTF-8, control characters, a 5 MB line, nesting 2000 levels
deep, arrays and scalars, SQL-looking text in every string field, duplicate keys, two values on
a line, empty and blank lines, a byte order mark, file names with glob and quote characters),
every bad line next to a good one, each line with the error codes it must be quarantined with.
Its tenants are acme, globex and initech (and names that are no tenant's)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

MISSING = object()  # a field left out of a message
EVENT_TS = "2025-06-01T12:00:00Z"
SQL_TEXTS: tuple[str, ...] = (
    "'; drop table records; --",
    "' or '1'='1",
    '"); delete from profile_lake.records where ("1"="1',
    "1; select * from tenants; --",
    "`records`; truncate table ingest_errors",
)
UTF8_MARK = "\u2603MARK\u2603"
# A line nests at most 999 levels of objects and arrays (the parse step's limit: Jackson's
# 1000, less the array the line is wrapped in); the message object is the first level.
MAX_DEPTH = 999
# A file that is not gzip behind a .gz name is one line 0 (the whole file) that the parse step
# quarantines; the line's bytes are not readable text, so its code is invalid_utf8.
UNREADABLE_FILE_CODES = ("invalid_utf8",)


def dumps(message: Any) -> str:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


def nested_text(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


@dataclass(frozen=True)
class Line:
    raw: bytes
    codes: tuple[str, ...]  # sorted; empty for a good line
    why: str


def good(message: dict[str, Any] | str, why: str = "good") -> Line:
    text = message if isinstance(message, str) else dumps(message)
    return Line(text.encode(), (), why)


def bad(raw: dict[str, Any] | str | bytes, *codes: str, why: str = "") -> Line:
    if isinstance(raw, dict):
        raw = dumps(raw)
    if isinstance(raw, str):
        raw = raw.encode()
    assert codes, why
    return Line(raw, tuple(sorted(codes)), why or "/".join(codes))


def _with(message: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    message = dict(message)
    for name, value in changes.items():
        if value is MISSING:
            message.pop(name, None)
        else:
            message[name] = value
    return message


def record(key: str, **changes: Any) -> dict[str, Any]:
    return _with(
        {
            "tenant_id": "acme",
            "record_id": key,
            "op": "upsert",
            "event_ts": EVENT_TS,
            "seq": 1,
            "record_type": "profile",
            "primary_id": f"email:{key}@example.com",
            "related_ids": [f"cookie:{key}"],
            "payload": {"key": key, "tier": "gold", "visits": 3},
        },
        changes,
    )


def mutation(key: str, **changes: Any) -> dict[str, Any]:
    return _with(
        {
            "tenant_id": "acme",
            "from_id": f"cookie:{key}",
            "to_id": f"email:{key}@example.com",
            "executed_ts": EVENT_TS,
            "seq": 1,
        },
        changes,
    )


def name_update(key: str, **changes: Any) -> dict[str, Any]:
    return _with(
        {
            "tenant_id": "acme",
            "id": f"email:{key}@example.com",
            "name": f"Name {key}",
            "updated_ts": EVENT_TS,
            "seq": 1,
        },
        changes,
    )


def erasure_request(key: str, **changes: Any) -> dict[str, Any]:
    """A request naming an identity no other line of the corpus has: applying it erases only
    itself."""
    return _with(
        {
            "tenant_id": "acme",
            "request_id": f"req-{key}",
            "identity": f"email:erase-{key}@example.com",
            "requested_ts": EVENT_TS,
        },
        changes,
    )


def with_invalid_utf8(message: dict[str, Any], raw: bytes) -> bytes:
    return dumps(message).encode().replace(UTF8_MARK.encode(), raw)


# ---------- the records stream


def records_parse_problems() -> list[Line]:
    text = dumps(record("two-values"))
    return [
        bad(with_invalid_utf8(record("u1", payload={"city": f"Montr{UTF8_MARK}al"}), b"\xe9"),
            "invalid_utf8"),
        bad(with_invalid_utf8(record("u2", tenant_id=f"ac{UTF8_MARK}me"), b"\xff\xfe"),
            "invalid_utf8"),
        bad(with_invalid_utf8(record(f"u3{UTF8_MARK}"), b"\xed\xa0\x80"), "invalid_utf8"),
        bad(with_invalid_utf8(record("u4", payload={"x": UTF8_MARK}), b"\xc0\xaf"),
            "invalid_utf8"),
        # control characters: unescaped inside a string, or outside any string
        bad(dumps(record("c1", payload={"note": "MARK"})).replace("MARK", "a\x01b\x07c"),
            "invalid_json", why="raw control characters in a string"),
        bad(dumps(record("c2", record_id="MARK")).replace("MARK", "tab\there"),
            "invalid_json", why="raw tab in a string"),
        bad(dumps(record("c3")) + "\x00", "invalid_json", why="NUL after the object"),
        bad(dumps(record("c4")) + "\x0b", "invalid_json", why="vertical tab after the object"),
        bad("\x1b[31m" + dumps(record("c5")), "invalid_json", why="terminal escape first"),
        # nesting 2000 levels deep: in the payload, and as the whole line
        bad(dumps(record("deep1", payload="MARK")).replace('"MARK"', nested_text(2000)),
            "invalid_json", why="payload nested 2000 levels"),
        bad("[" * 2000 + "]" * 2000, "invalid_json", why="arrays nested 2000 levels"),
        bad(dumps(record("deep2", payload="MARK")).replace('"MARK"', nested_text(MAX_DEPTH)),
            "invalid_json", why="one level over the parse limit"),
        # JSON, but not an object
        bad("[" + dumps(record("arr")) + "]", "not_an_object", why="an array of a message"),
        bad("[]", "not_an_object"),
        bad("[" + dumps(record("arr2")) + "," + dumps(record("arr3")) + "]", "not_an_object"),
        bad('"acme"', "not_an_object"),
        bad(json.dumps(dumps(record("str"))), "not_an_object", why="a message as a string"),
        bad("42", "not_an_object"),
        bad("-0.5e3", "not_an_object"),
        bad("null", "not_an_object"),
        bad("true", "not_an_object"),
        # duplicate top-level keys
        bad('{"tenant_id":"acme",' + dumps(record("dup1"))[1:], "duplicate_key",
            why="same key, same value"),
        bad(dumps(record("dup2"))[:-1] + ',"seq":2}', "duplicate_key",
            why="same key, another value"),
        bad(dumps(record("dup3"))[:-1] + ',"tenant\\u005fid":"globex"}', "duplicate_key",
            why="the same key spelled with an escape"),
        bad(dumps(record("dup4"))[:-1] + ',"payload":{"x":1}}', "duplicate_key"),
        # two values, or trailing content
        bad(text + text, "invalid_json", why="two messages on one line"),
        bad(text + " " + text, "invalid_json", why="two messages and a space"),
        bad(text + "[]", "invalid_json"),
        bad(text + " x", "invalid_json"),
        bad(text + " // comment", "invalid_json"),
        bad(dumps(record("nan"))[:-1] + ',"score":NaN}', "invalid_json"),
        bad(dumps(record("single")).replace('"', "'"), "invalid_json", why="single quotes"),
        bad(text[: len(text) // 2], "invalid_json", why="truncated"),
        bad(text[:-1] + ",}", "invalid_json", why="trailing comma"),
        # nothing, blank, a byte order mark
        bad("", "invalid_json", why="an empty line"),
        bad("   \t  ", "invalid_json", why="only whitespace"),
        bad("\ufeff" + dumps(record("bom")), "invalid_json", why="a byte order mark"),
        bad("\ufeff", "invalid_json", why="only a byte order mark"),
        bad("\u00a0" + dumps(record("nbsp")), "invalid_json", why="a no-break space first"),
        bad("tenant_id=acme record_id=r1 op=upsert", "invalid_json"),
    ]  # fmt: skip


def records_convert_problems() -> list[Line]:
    required = ("tenant_id", "record_id", "op", "event_ts", "seq", "record_type", "primary_id")
    lines = [
        bad("{}", *["missing_field"] * len(required), why="every field missing"),
        bad({"unrelated": 1}, *["missing_field"] * len(required), why="only unknown fields"),
    ]
    for name in (*required, "payload"):
        lines.append(bad(record(f"miss-{name}", **{name: MISSING}), "missing_field"))
        lines.append(bad(record(f"null-{name}", **{name: None}), "missing_field"))
    wrong_types: dict[str, tuple[Any, ...]] = {
        "tenant_id": (42, ["acme"], {"id": "acme"}, True),
        "record_id": (12345, {"id": "r"}, ["r"]),
        "op": (1, True, ["upsert"]),
        "event_ts": (1733050000, [EVENT_TS], {"ts": EVENT_TS}),
        "seq": ("3", "1; drop table records", 2.5, 1.5e3, True, [1], {"n": 1}),
        "record_type": (7, ["profile"]),
        "primary_id": ({"namespace": "email", "value": "a@example.com"}, 42, ["email:a@b"]),
        "related_ids": ("email:a@example.com", {"0": "email:a@example.com"}, [42], 1),
        "payload": ([1, 2, 3], '{"tier":"gold"}', 42, True, SQL_TEXTS[0]),
    }
    for name, values in wrong_types.items():
        for index, value in enumerate(values):
            lines.append(bad(record(f"type-{name}-{index}", **{name: value}), "wrong_type"))
    for index, value in enumerate(
        (
            *SQL_TEXTS,
            "2025-06-01T12:00:00",  # no zone
            "2025-06-01",
            "2025-02-30T10:00:00Z",  # no such day
            "2025-12-01T25:61:00Z",  # no such time
            "2025-13-01T00:00:00Z",
            "2025-06-01T12:00:00+25:00",
            "yesterday",
            "",
        )
    ):
        lines.append(bad(record(f"ts-{index}", event_ts=value), "invalid_timestamp"))
    # a convert problem hides the validate problems of the same line
    lines += [
        bad(record("hide1", seq="1", op="insert", tenant_id="nosuchtenant"), "wrong_type"),
        bad(record("hide2", event_ts="soon", seq=-1), "invalid_timestamp"),
        bad(record("hide3", op=MISSING, payload=42, record_id=""), "missing_field",
            why="op missing: payload not required, not typed"),
        bad(record("hide4", seq=MISSING, payload=[1]), "missing_field", "wrong_type"),
        bad(record("hide5", tenant_id=7, record_id=8, seq="x"), *["wrong_type"] * 3),
        # values nested as deep as a line may be: typed, not a crash
        bad(dumps(record("deep-rid", record_id="MARK")).replace(
            '"MARK"', nested_text(MAX_DEPTH - 1)), "wrong_type"),
        bad(dumps(record("deep-related", related_ids="MARK")).replace(
            '"MARK"', "[" + nested_text(MAX_DEPTH - 2) + "]"), "wrong_type"),
    ]  # fmt: skip
    return lines


def records_validate_problems() -> list[Line]:
    lines: list[Line] = []
    for index, text in enumerate(SQL_TEXTS):
        lines += [
            bad(record(f"sql-tenant-{index}", tenant_id=text), "invalid_tenant_id"),
            bad(record(f"sql-op-{index}", op=text), "invalid_op"),
            bad(record(f"sql-type-{index}", record_type=text), "invalid_record_type"),
            bad(record(f"sql-primary-{index}", primary_id=text), "invalid_identity"),
            bad(record(f"sql-related-{index}", related_ids=["cookie:ok", text]),
                "invalid_identity"),
        ]  # fmt: skip
    for index, tenant in enumerate(("Acme", "acme-eu", "", "a" * 65, "acme corp", "acmé")):
        lines.append(bad(record(f"tenant-{index}", tenant_id=tenant), "invalid_tenant_id"))
    for index, tenant in enumerate(("nosuchtenant", "acme2", "drop_table_records", "a" * 64)):
        lines.append(bad(record(f"unknown-{index}", tenant_id=tenant), "unknown_tenant"))
    for index, record_id in enumerate(("", "r" * 257, "é" * 257)):
        lines.append(bad(record(f"rid-{index}", record_id=record_id), "invalid_record_id"))
    for index, op in enumerate(("insert", "UPSERT", "Delete", "", " upsert")):
        lines.append(bad(record(f"op-{index}", op=op), "invalid_op"))
    lines += [
        bad(record("future-1", event_ts="2999-01-01T00:00:00Z"), "event_ts_in_future"),
        bad(record("future-2", event_ts="9999-12-31T23:59:59.999999+14:00"),
            "event_ts_in_future"),
        bad(record("future-3", event_ts=_hours_from_now(50)), "event_ts_in_future"),
        bad(record("neg-seq-1", seq=-1), "negative_seq"),
        bad(record("neg-seq-2", seq=-9223372036854775808), "negative_seq"),
        bad(record("rtype-1", record_type="order"), "invalid_record_type",
            why="initech's type, not acme's"),
        bad(record("rtype-2", record_type="Profile"), "invalid_record_type"),
        bad(record("rtype-3", record_type=""), "invalid_record_type"),
    ]  # fmt: skip
    for index, identity in enumerate(
        ("email", "fax:+15550100", "Email:a@example.com", "email:", ":a@example.com",
         "cookie:" + "c" * 257, "", " email:a@example.com")
    ):  # fmt: skip
        lines.append(bad(record(f"pid-{index}", primary_id=identity), "invalid_identity"))
    lines += [
        bad(record("related-null", related_ids=[None]), "invalid_identity",
            why="null is not an identity"),
        bad(record("related-null-2", related_ids=["cookie:ok", None]), "invalid_identity"),
        bad(record("related-many", related_ids=[f"cookie:c{i}" for i in range(101)]),
            "too_many_related_ids"),
        bad(record("related-many-bad",
                   related_ids=[*(f"cookie:c{i}" for i in range(100)), "bad"]),
            "invalid_identity", "too_many_related_ids"),
        bad(record("payload-globex", tenant_id="globex",
                   payload={"blob": "x" * 70_000}), "payload_too_large"),
        # a 5 MB line: over the default 1 MiB payload limit
        bad(record("payload-5mb", payload={"blob": "y" * 5_000_000, "n": 1}),
            "payload_too_large", why="a 5 MB line"),
        # several rules at once: every problem is listed
        bad(record("multi-1", op="insert", seq=-3, record_type="Profile"),
            "invalid_op", "invalid_record_type", "negative_seq"),
        bad(record("multi-2", tenant_id="nosuchtenant", op="merge"),
            "invalid_op", "unknown_tenant"),
        bad(record("multi-3", primary_id="bad", related_ids=["also bad"]),
            "invalid_identity", "invalid_identity"),
        bad(record("multi-4", tenant_id="globex", seq=-1,
                   payload={"blob": "z" * 70_000}), "negative_seq", "payload_too_large"),
        bad(record("", op="merge", event_ts="2999-01-01T00:00:00Z", seq=-1,
                   record_type="nope", primary_id="nope",
                   related_ids=[*(f"cookie:c{i}" for i in range(100)), "nope"]),
            "event_ts_in_future", "invalid_identity", "invalid_identity", "invalid_op",
            "invalid_record_id", "invalid_record_type", "negative_seq", "too_many_related_ids",
            why="every validate rule of a record at once"),
    ]  # fmt: skip
    return lines


def _hours_from_now(hours: int) -> str:
    return (datetime.now(UTC) + timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ")


def records_good_lines() -> list[Line]:
    lines = [good(record(f"good-sql-{index}", record_id=text, primary_id=f"email:{text}",
                         related_ids=[f"crm:{text}", f"device:{text}"],
                         payload={text: text, "nested": {text: [text]}}),
                  why="SQL-looking text in every free-text field")
             for index, text in enumerate(SQL_TEXTS)]  # fmt: skip
    lines += [
        good({**record("good-extra"), SQL_TEXTS[0]: SQL_TEXTS[1], "tenant": "globex",
              "extra": {"deep": [1, {"x": None}]}}, why="unknown fields are ignored"),
        good(record("good-ctrl\u0001\u0000\u001f", payload={"note": "a\u0000b\u0007c\n\t\r"}),
             why="escaped control characters"),
        good(record("good-unicode-☃", primary_id="email:zoë@example.com",
                    payload={"emoji": "\U0001f600", "rtl": "\u202eabc", "zwj": "a\u200db"})),
        good('{"payload":{"a":1,"a":2,"b":{"c":1,"c":{"d":2}}},'
             + dumps(record("good-nested-dup", payload=MISSING))[1:],
             why="a key repeated inside the payload is fine (only the top level must not)"),
        good("   " + dumps(record("good-spaces")) + " \t ", why="whitespace around the object"),
        good(record("good-no-related", related_ids=MISSING)),
        good(record("good-null-related", related_ids=None)),
        good(record("good-empty-related", related_ids=[])),
        good(record("good-100-related", related_ids=[f"loyalty:l{i}" for i in range(100)])),
        good(record("good-identity-256", primary_id="phone:" + "9" * 256,
                    related_ids=["device:" + "é" * 256])),
        good(record("é" * 256, primary_id="email:é"), why="record_id of 256 characters"),
        good(record("good-seq-0", seq=0)),
        good(record("good-seq-max", seq=9223372036854775807)),
        good(record("good-order", tenant_id="initech", record_type="order")),
        good(record("good-event", record_type="event")),
        good(record("good-empty-payload", payload={})),
        good(record("good-deep-payload", payload=nested(200, leaf=[1, {"b": None}])),
             why="a payload nested 200 levels"),
        good(dumps(record("good-deepest-payload", payload="MARK")).replace(
            '"MARK"', nested_text(MAX_DEPTH - 1)), why="a line nested as deep as it may be"),
        good(dumps(record("good-deepest-update", payload="MARK", seq=2)).replace(
            '"MARK"', nested_text(MAX_DEPTH - 1))),
        good(dumps(record("good-deepest-update", payload="MARK", seq=3)).replace(
            '"MARK"', '{"b":' + nested_text(MAX_DEPTH - 2) + "}")),
        good(record("good-payload-globex-limit", tenant_id="globex",
                    payload={"blob": "x" * 60_000})),
        good(record("good-offset", event_ts="2025-06-01T12:00:00.123456789+05:30")),
        good(record("good-offset-2", event_ts="2025-06-01 12:00-08:00")),
        good(record("good-offset-3", event_ts="2025-06-01T12:00:00+0530")),
        good(record("good-no-seconds", event_ts="2025-06-01T12:00Z")),
        good(record("good-lower-case", event_ts="2025-06-01t12:00:00z")),
        good(record("good-decimal-comma", event_ts="2025-06-01T12:00:00,5Z")),
        good(record("good-soon", event_ts=_hours_from_now(20)),
             why="less than a day after ingestion"),
        # deletes ignore the payload, whatever it is
        good(record("good-deleted")),
        good(record("good-deleted", op="delete", seq=2, payload=MISSING)),
        good(record("good-deleted-2", op="delete", payload=42)),
        good(record("good-deleted-3", op="delete", payload=None)),
    ]  # fmt: skip
    return lines


# ---------- the id_mutations and entity_names streams


def mutation_lines() -> list[Line]:
    lines = [
        bad(with_invalid_utf8(mutation(f"m-utf8{UTF8_MARK}"), b"\x80"), "invalid_utf8"),
        bad("{}", *["missing_field"] * 5),
        bad(mutation("m-miss", to_id=MISSING), "missing_field"),
        bad(mutation("m-type", from_id=["cookie:x"]), "wrong_type"),
        bad(mutation("m-ts", executed_ts="yesterday"), "invalid_timestamp"),
        bad(mutation("m-seq", seq=-1), "negative_seq"),
        bad(mutation("m-tenant", tenant_id="nosuchtenant"), "unknown_tenant"),
        bad(mutation("m-tenant2", tenant_id="Acme Corp"), "invalid_tenant_id"),
        bad(
            mutation("m-both", from_id="fax:1", to_id="nope"),
            "invalid_identity",
            "invalid_identity",
        ),
        bad(dumps(mutation("m-dup"))[:-1] + ',"to_id":"email:x@example.com"}', "duplicate_key"),
        bad("[]", "not_an_object"),
        bad("", "invalid_json"),
        bad("\ufeff" + dumps(mutation("m-bom")), "invalid_json"),
    ]
    for index, text in enumerate(SQL_TEXTS):
        lines += [
            bad(mutation(f"m-sql-{index}", from_id=text), "invalid_identity"),
            bad(mutation(f"m-sql-tenant-{index}", tenant_id=text), "invalid_tenant_id"),
            good(mutation(f"m-good-sql-{index}", from_id=f"crm:{text}", to_id=f"email:{text}")),
        ]
    lines += [
        good(mutation("m-same", to_id="cookie:m-same"), why="from_id = to_id: a no-op"),
        good(
            mutation("m-future", executed_ts="2999-01-01T00:00:00Z"), why="executed_ts has no bound"
        ),
        good({**mutation("m-extra"), "reason": SQL_TEXTS[1]}),
    ]
    return lines


def name_lines() -> list[Line]:
    lines = [
        bad(with_invalid_utf8(name_update("n-utf8", name=f"Zo{UTF8_MARK}"), b"\xe2\x82"),
            "invalid_utf8"),
        bad("{}", *["missing_field"] * 5),
        bad(name_update("n-miss", name=MISSING), "missing_field", why="name is required"),
        bad(name_update("n-type", name=42), "wrong_type"),
        bad(name_update("n-type2", name=["Anna"]), "wrong_type"),
        bad(name_update("n-long", name="x" * 1025), "name_too_long"),
        bad(name_update("n-long2", name="é" * 1025), "name_too_long"),
        bad(name_update("n-ts", updated_ts="2025-06-01T12:00:00"), "invalid_timestamp"),
        bad(name_update("n-seq", seq=-5, name="y" * 2000), "name_too_long", "negative_seq"),
        bad(name_update("n-tenant", tenant_id="nosuchtenant"), "unknown_tenant"),
        bad(name_update("n-id", id=SQL_TEXTS[1]), "invalid_identity"),
        bad("null", "not_an_object"),
        bad("   ", "invalid_json"),
    ]  # fmt: skip
    for index, text in enumerate(SQL_TEXTS):
        lines.append(good(name_update(f"n-sql-{index}", name=text, id=f"loyalty:{text}")))
    lines += [
        good(name_update("n-empty", name=""), why="an empty name"),
        good(name_update("n-null", name=None), why="null removes the name"),
        good(name_update("n-1024", name="é" * 1024), why="1024 characters"),
        good(name_update("n-ctrl", name="tab\there\u0000nul")),
    ]
    return lines


def erasure_lines() -> list[Line]:
    """Bad requests: quarantined with their codes, and (unlike other streams) no text kept."""
    lines = [
        bad(with_invalid_utf8(erasure_request(f"e-utf8{UTF8_MARK}"), b"\xff"), "invalid_utf8"),
        bad("{}", *["missing_field"] * 4),
        bad(erasure_request("e-miss", identity=MISSING), "missing_field"),
        bad(erasure_request("e-id", request_id=""), "invalid_request_id"),
        bad(erasure_request("e-id2", request_id="r" * 129), "invalid_request_id"),
        bad(erasure_request("e-type", identity=["email:x@example.com"]), "wrong_type"),
        bad(erasure_request("e-ts", requested_ts="2025-06-01T12:00:00"), "invalid_timestamp"),
        bad(erasure_request("e-tenant", tenant_id="nosuchtenant"), "unknown_tenant"),
        bad(dumps(erasure_request("e-dup"))[:-1] + ',"identity":"crm:1"}', "duplicate_key"),
        bad("[]", "not_an_object"),
        bad('{"tenant_id":"acme","identity":"email:e-cut@example.com"', "invalid_json"),
    ]
    for index, text in enumerate(SQL_TEXTS):
        lines.append(bad(erasure_request(f"e-sql-{index}", identity=text), "invalid_identity"))
    lines.append(good(erasure_request("e-sql-ok", request_id=SQL_TEXTS[0])))
    return lines


# ---------- the landing folder


@dataclass
class LandingFile:
    """One landing file: its lines, how it is written, and what was expected of each line."""

    name: str  # relative to the landing folder
    lines: list[Line] = field(default_factory=list)
    crlf: bool = False
    final_newline: bool = True
    gzip: bool = False
    corrupt: bool = False  # a .gz file whose bytes are not gzip

    def content(self) -> bytes:
        if self.corrupt:
            return b"\x1f\x8b\x08 this is not gzip " + b"\xff" * 32
        ending = b"\r\n" if self.crlf else b"\n"
        data = ending.join(line.raw for line in self.lines)
        if self.lines and self.final_newline:
            data += ending
        return gzip.compress(data) if self.gzip else data

    def expected(self) -> dict[int, tuple[str, ...]]:
        """line number -> codes (empty for a good line)."""
        if self.corrupt:
            return {0: UNREADABLE_FILE_CODES}
        return {number: line.codes for number, line in enumerate(self.lines, start=1)}


def interleave(bad_lines: list[Line], make_good: Callable[[int], Line]) -> list[Line]:
    """Every bad line followed by a good one, so a neighbour of each bad line is checked."""
    lines: list[Line] = []
    for index, line in enumerate(bad_lines):
        lines.append(line)
        if line.codes:
            lines.append(make_good(index))
    return lines


def landing_files(tag: str) -> list[LandingFile]:
    def good_record(index: int) -> Line:
        return good(record(f"{tag}-r{index:04d}", seq=index, payload={"n": index, "tag": tag}))

    def good_mutation(index: int) -> Line:
        return good(mutation(f"{tag}-m{index:04d}", seq=index))

    def good_name(index: int) -> Line:
        return good(name_update(f"{tag}-n{index:04d}", seq=index))

    def good_request(index: int) -> Line:
        return good(erasure_request(f"{tag}-e{index:04d}"))

    parse = interleave(records_parse_problems(), good_record)
    convert = interleave(records_convert_problems(), lambda i: good_record(1000 + i))
    validate = interleave(records_validate_problems(), lambda i: good_record(2000 + i))
    return [
        LandingFile("records/part-00000.jsonl", parse),
        LandingFile("records/part-00001 it's {odd} [name].jsonl", convert[:40], crlf=True),
        LandingFile("records/part-00002 ☃.jsonl.gz", convert[40:], gzip=True),
        LandingFile("records/part-00003.jsonl", validate, final_newline=False),
        LandingFile("records/part-00004.jsonl", records_good_lines()),
        LandingFile("records/part-00005.jsonl.gz", corrupt=True),
        LandingFile("records/part-00006.jsonl"),  # empty: no line, nothing to account for
        LandingFile("id_mutations/part-00000.jsonl", interleave(mutation_lines(), good_mutation)),
        LandingFile("entity_names/part-00000.jsonl", interleave(name_lines(), good_name),
                    crlf=True),
        LandingFile("erasures/part-00000.jsonl", interleave(erasure_lines(), good_request)),
    ]  # fmt: skip


# beside the landing files, files that are not landing files: the ingest ignores them
NOT_LANDING_FILES = {
    "records/README.txt": "not a landing file\n",
    "records/part-00000.jsonl.tmp": "{}\n",
}


def write_corpus(root: Path, files: list[LandingFile]) -> None:
    for landing_file in files:
        path = root / landing_file.name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(landing_file.content())
    for name, text in NOT_LANDING_FILES.items():
        (root / name).write_text(text)


def corpus_files(files: list[LandingFile]) -> set[str]:
    """Every file the corpus writes, relative to the landing folder: the lines of no other file
    are its."""
    return {landing_file.name for landing_file in files} | set(NOT_LANDING_FILES)
