"""Judging landed lines against an erased set (profile_lake.erasure.lines): which lines go,
which lose identities from related_ids with every other byte kept, and that lines which will
be quarantined (not JSON, a key named twice, not UTF-8) go when they name the person anywhere."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profile_lake.erasure.hashing import ErasedSet
from profile_lake.erasure.lines import ERASED, UNCHANGED, Verdict, judge_line
from profile_lake.ingest.lines import split_lines

ANA = "email:ana@example.com"
ANA_PHONE = "phone:+15550001"
ANA_CRM = 'crm:a"b\\c'  # needs escapes in JSON
ANA_COOKIE = "cookie:zoë"
ERASED_IDENTITIES = (ANA, ANA_PHONE, ANA_CRM, ANA_COOKIE)
ERASED_RECORD = "r-erased"
# near misses: other namespaces, prefixes, case
KEPT_IDENTITIES = ("email:bob@example.com", "device:ana@example.com", "crm:a", "cookie:zoe")
BOB = KEPT_IDENTITIES[0]

ERASED_SET = ErasedSet.of_values(
    bytes.fromhex("5a17"), identities=ERASED_IDENTITIES, record_ids=[ERASED_RECORD]
)


def judge(stream: str, line: str, *, is_valid_utf8: bool = True) -> Verdict:
    return judge_line(stream, line, ERASED_SET, is_valid_utf8=is_valid_utf8)


def record_line(
    primary: str = BOB, record_id: str = "r-1", related: str | None = None, payload: str = "{}"
) -> str:
    """A records line; `related` is the related_ids text as written (None: no such field)."""
    related_field = "" if related is None else f', "related_ids": {related}'
    return (
        f'{{"tenant_id": "acme", "record_id": {json.dumps(record_id)}, "op": "upsert", '
        f'"event_ts": "2026-01-01T00:00:00Z", "seq": 0, "record_type": "profile", '
        f'"primary_id": {json.dumps(primary)}{related_field}, "payload": {payload}}}'
    )


# ------------------------------------------------------------------------- by the fields


@pytest.mark.parametrize(
    ("stream", "line"),
    [
        ("records", record_line(primary=ANA)),
        ("records", record_line(record_id=ERASED_RECORD)),
        ("records", record_line(primary=ANA_CRM, related=f'["{BOB}"]')),
        ("id_mutations", json.dumps({"tenant_id": "acme", "from_id": ANA, "to_id": BOB})),
        ("id_mutations", json.dumps({"tenant_id": "acme", "from_id": BOB, "to_id": ANA_PHONE})),
        ("entity_names", json.dumps({"tenant_id": "acme", "id": ANA_COOKIE, "name": "Zoë"})),
    ],
)
def test_a_line_naming_the_person_in_its_fields_is_erased(stream: str, line: str) -> None:
    assert judge(stream, line) == ERASED


@pytest.mark.parametrize(
    ("stream", "line"),
    [
        ("records", record_line()),
        # payload values are never matched, nor a name, nor a field another stream names
        ("records", record_line(payload=json.dumps({"friend": ANA, ERASED_RECORD: ANA}))),
        ("entity_names", json.dumps({"tenant_id": "acme", "id": BOB, "name": ANA})),
        ("id_mutations", json.dumps({"from_id": BOB, "to_id": BOB, "record_id": ERASED_RECORD})),
        ("entity_names", json.dumps({"id": BOB, "primary_id": ANA})),
        # an erased identity is no erased record_id, nor the other way round
        ("records", record_line(record_id=ANA)),
        ("records", record_line(primary="email:" + ERASED_RECORD)),
        # near misses
        *(("records", record_line(primary=kept)) for kept in KEPT_IDENTITIES),
        ("records", record_line(primary=ANA.upper())),
    ],
)
def test_a_line_not_naming_the_person_in_its_fields_is_unchanged(stream: str, line: str) -> None:
    assert judge(stream, line) == UNCHANGED


@pytest.mark.parametrize(
    "primary_text",
    [
        '"email:ana\\u0040example.com"',
        '"\\u0065mail:ana@example.com"',
        '"email:ana@example\\u002ecom"',
        '"crm:a\\"b\\\\c"',
        '"crm:a\\u0022b\\u005cc"',
        '"cookie:zo\\u00eb"',
        '"cookie:zo\\u00EB"',
        '"email:ana@example.com"',
    ],
)
def test_identities_are_compared_as_decoded_json_strings(primary_text: str) -> None:
    line = record_line().replace(json.dumps(BOB), primary_text)
    assert json.loads(line)["primary_id"] in ERASED_IDENTITIES
    assert judge("records", line) == ERASED


def test_a_surrogate_pair_escape_is_one_character() -> None:
    erased = ErasedSet.of_values(b"s", identities=["email:😀@example.com"])
    line = '{"id": "email:\\ud83d\\ude00@example.com"}'
    assert judge_line("entity_names", line, erased) == ERASED
    # the same escape in a line that is not JSON
    assert judge_line("entity_names", line[:-1], erased) == ERASED


@pytest.mark.parametrize(
    ("stream", "line"),
    [
        # a field of the wrong type is quarantined with its text: any string in it counts
        ("records", record_line().replace(json.dumps(BOB), json.dumps([ANA]))),
        ("records", record_line(record_id=ERASED_RECORD).replace('"r-erased"', '["r-erased"]')),
        ("entity_names", json.dumps({"id": {"namespace": "email", ANA: 1}})),
        ("records", record_line(related=json.dumps(ANA))),
        ("records", record_line(related=json.dumps([BOB, [ANA]]))),
        ("records", record_line(related=json.dumps([{"id": ANA_PHONE}]))),
    ],
)
def test_a_mistyped_field_holding_the_person_erases_the_line(stream: str, line: str) -> None:
    assert judge(stream, line) == ERASED


def test_an_unknown_stream_is_refused_and_an_empty_erased_set_changes_nothing() -> None:
    with pytest.raises(ValueError, match="no erasure rule for stream 'erasures'"):
        judge("erasures", record_line(primary=ANA))
    empty = ErasedSet.of_values(b"s")
    assert judge_line("records", record_line(primary=ANA), empty) == UNCHANGED
    assert judge_line("records", "not json", empty) == UNCHANGED


# ------------------------------------------------------------------ related_ids, in place


@pytest.mark.parametrize(
    ("related", "stripped"),
    [
        (f'["{ANA}", "{BOB}"]', f'["{BOB}"]'),  # the first
        (f'["a:1", "{ANA}", "{BOB}"]', f'["a:1", "{BOB}"]'),  # a middle one
        (f'["{BOB}", "{ANA}"]', f'["{BOB}"]'),  # the last
        (f'[ "{ANA}" , "{ANA_PHONE}" ]', "[  ]"),  # all of them
        (f'["{ANA}","a:1","{ANA_PHONE}","{BOB}"]', f'["a:1","{BOB}"]'),  # apart
        (f'[ "a:1" ,\t"{ANA}" ,  "{BOB}"\n]', f'[ "a:1" ,  "{BOB}"\n]'),  # spacing kept
        (f'[1, null, "{ANA}", {{"x": 2}}]', '[1, null, {"x": 2}]'),  # others kept as they are
        ('["crm:a\\"b\\\\c", "cookie:zo\\u00eb", "x\\/y"]', '["x\\/y"]'),  # escapes
        (f'["{ANA}", "{ANA}", "{BOB}", "{ANA}"]', f'["{BOB}"]'),  # repeats
    ],
)
def test_erased_identities_leave_related_ids_in_place(related: str, stripped: str) -> None:
    # the payload names the person too, and keeps its spacing, escapes and repeated keys
    payload = f'{{"b": 1,  "a": ["{ANA}", "\\u00e9"], "{ANA}": "{ERASED_RECORD}", "b": 2}}'
    line = record_line(related=related, payload=payload)
    verdict = judge("records", line)
    assert verdict == Verdict("stripped", line.replace(related, stripped))
    assert json.loads(verdict.line or "")["related_ids"] == json.loads(stripped)


@pytest.mark.parametrize("related", [None, "null", "[]", "[ ]", f'["{BOB}", null]', '"x"', "7"])
def test_related_ids_without_the_person_leave_the_line_as_it_is(related: str | None) -> None:
    assert judge("records", record_line(related=related)) == UNCHANGED


def test_related_ids_are_stripped_only_from_records() -> None:
    # names and renames have no related_ids to speak of: a field of that name is not read
    line = json.dumps({"id": BOB, "name": "Bob", "related_ids": [ANA]})
    assert judge("entity_names", line) == UNCHANGED


WHITESPACE = st.sampled_from(["", " ", "  ", "\n", "\t", " \r\n "])


@st.composite
def encoded_identity(draw: st.DrawFn) -> tuple[str, str]:
    """An identity, erased or not, and a JSON string text of it (plain, ASCII-only, or every
    character as a \\u escape)."""
    value = draw(st.sampled_from(ERASED_IDENTITIES + KEPT_IDENTITIES))
    style = draw(st.sampled_from(["plain", "ascii", "unicode"]))
    if style == "unicode":
        return value, '"' + "".join(f"\\u{ord(char):04x}" for char in value) + '"'
    return value, json.dumps(value, ensure_ascii=style == "ascii")


def array_text(opening: str, elements: list[str], separators: list[str], closing: str) -> str:
    """A JSON array's text: `separators[i]` comes before `elements[i]` (the first's unused)."""
    items = "".join((separators[i] if i else "") + text for i, text in enumerate(elements))
    return "[" + opening + items + closing + "]"


@settings(max_examples=300, deadline=None)
@given(st.lists(encoded_identity(), max_size=8), st.data(), st.booleans())
def test_a_stripped_line_reads_as_the_line_without_the_erased_identities(
    identities: list[tuple[str, str]], data: st.DataObject, related_last: bool
) -> None:
    opening, closing = data.draw(WHITESPACE), data.draw(WHITESPACE)
    separators = [f"{data.draw(WHITESPACE)},{data.draw(WHITESPACE)}" for _ in identities]
    texts = [text for _, text in identities]
    head = f'{{"record_id":"r-1","primary_id":"{BOB}","payload":{{"x":"{ANA}"}},"related_ids":'
    tail = "}" if related_last else ', "seq" :1 }'
    line = head + array_text(opening, texts, separators, closing) + tail
    original = json.loads(line)

    verdict = judge("records", line)

    kept = [i for i, (value, _) in enumerate(identities) if value not in ERASED_IDENTITIES]
    if len(kept) == len(identities):
        assert verdict == UNCHANGED
        return
    assert verdict.kind == "stripped" and verdict.line is not None
    assert json.loads(verdict.line) == {
        **original,
        "related_ids": [identities[i][0] for i in kept],
    }
    # every byte outside the removed elements is as it landed: each kept element keeps its
    # text (escapes and all) and the separator before it, unless it became the first
    kept_texts = [texts[i] for i in kept]
    kept_separators = [separators[i] for i in kept]
    assert verdict.line == head + array_text(opening, kept_texts, kept_separators, closing) + tail


# ------------------------------------------------------------- lines that will be quarantined


@pytest.mark.parametrize(
    "line",
    [
        # a key named twice: whichever occurrence, and wherever the identity is
        f'{{"primary_id": "{BOB}", "primary_id": "{ANA}"}}',
        f'{{"primary_id": "{ANA}", "primary_id": "{BOB}"}}',
        f'{{"record_id": "r-1", "record_id": "r-2", "payload": {{"x": "{ANA_PHONE}"}}}}',
        f'{{"record_id": "{ERASED_RECORD}", "record_id": "r-2"}}',
        # not JSON: truncated, trailing content, a stray quote, NaN
        f'{{"record_id": "r-1", "primary_id": "{ANA}',
        f'{{"record_id":"r-1","primary_id":"{BOB}","related_ids":["{ANA}"]}} trailing',
        f'{{"a": "b, "primary_id": "{ANA}"}}',
        f'{{"primary_id": "{BOB}", "related_ids": ["{ANA}"], "payload": {{"x": NaN}}}}',
        f'{{"record_id" :\t"{ERASED_RECORD}", oops}}',
        '{"record_id": "r-1", "primary_id": "email:ana\\u0040example.com" oops',
        '{"primary_id": "crm:a\\"b\\\\c",',
        # not an object
        f'["{ANA}"]',
        json.dumps(ANA),
        f'"{ANA}',  # unterminated: the token runs to the end
        ANA,  # no quotes at all: the whole line is the token
        # nested past Python's recursion limit
        record_line(primary=ANA, payload="[" * 5000 + "]" * 5000),
    ],
)
def test_a_line_to_be_quarantined_is_erased_when_any_token_names_the_person(line: str) -> None:
    assert judge("records", line) == ERASED


@pytest.mark.parametrize(
    "line",
    [
        f'{{"primary_id": "{BOB}", "primary_id": "{BOB}"}}',
        f'{{"record_id": "r-1", "primary_id": "{BOB}"',
        # an erased record_id that is not a record_id's value, and identity-like text that is
        # not a whole token
        f'{{"record_id": "r-1", "note": "{ERASED_RECORD}", bad',
        f'{{"x": "see {ANA}", "y": "{ANA} too", "z": "x{ANA}", bad',
        # a record_id key whose value is not a string
        f'{{"record_id": 1, "x": "{ERASED_RECORD}", bad',
        record_line(payload="[" * 5000 + "]" * 5000),
        "",
        "   ",
        "\\",
        '"',
        '\\"\\',
    ],
)
def test_a_line_to_be_quarantined_is_kept_when_no_token_names_the_person(line: str) -> None:
    assert judge("records", line) == UNCHANGED


def test_a_record_id_key_counts_only_in_the_stream_that_has_it() -> None:
    line = f'{{"record_id": "{ERASED_RECORD}", bad'
    assert judge("records", line) == ERASED
    assert judge("entity_names", line) == UNCHANGED
    assert judge("id_mutations", line) == UNCHANGED
    assert judge("id_mutations", f'{{"from_id": "{ANA}", bad') == ERASED


def landed(raw: bytes) -> tuple[str, bool]:
    (line,) = split_lines(raw)
    return line.line, line.is_valid_utf8


def test_a_line_that_is_not_utf8_is_scanned_as_the_quarantined_line_it_is() -> None:
    text, valid = landed(f'{{"primary_id": "{ANA}", "payload": {{"x": "'.encode() + b'\xff"}}')
    assert not valid and "\\xff" in text
    assert judge("records", text, is_valid_utf8=valid) == ERASED

    # the escaped bytes happen to read as JSON here: the line is still quarantined whole, so
    # an erased related identity erases it rather than being stripped from it
    raw = f'{{"primary_id": "{BOB}", "related_ids": ["{ANA}"], "x": "\\'.encode() + b'\xfe"}'
    text, valid = landed(raw)
    assert json.loads(text)["related_ids"] == [ANA]
    assert judge("records", text, is_valid_utf8=valid) == ERASED
    assert judge("records", text).kind == "stripped"

    # invalid bytes inside an identity: no identity of the lake is spelled so
    text, valid = landed(b'{"primary_id": "email:ana\xff@example.com"}')
    assert judge("records", text, is_valid_utf8=valid) == UNCHANGED
    text, valid = landed(f'{{"primary_id": "{BOB}"}}'.encode() + b"\xc3")
    assert judge("records", text, is_valid_utf8=valid) == UNCHANGED


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["records", "id_mutations", "entity_names"]),
    st.lists(
        st.sampled_from(
            ['"', "\\", "{", "}", "[", "]", ":", ",", " ", "x", "\\u00", "\\ud83d", "\\xff"]
            + [f'"{identity}"' for identity in (ANA, BOB, ERASED_RECORD)]
            + ['"record_id"', '"related_ids"', "null", "1"]
        ),
        max_size=30,
    ),
    st.booleans(),
)
def test_any_text_gets_a_verdict(stream: str, pieces: list[str], is_valid_utf8: bool) -> None:
    line = "".join(pieces)
    verdict = judge(stream, line, is_valid_utf8=is_valid_utf8)
    assert verdict.kind in ("unchanged", "erased", "stripped")
    if ANA not in line and ERASED_RECORD not in line:
        assert verdict == UNCHANGED
    if verdict.kind == "stripped":
        assert verdict.line is not None and ANA not in verdict.line
        assert json.loads(verdict.line)["related_ids"] is not None
