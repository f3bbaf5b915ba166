"""Judge a landed line against a tenant's erased set: keep it, erase it, or strip it.

SPEC.md section 7 defines the tables after an erasure as those built from the landed lines
with every line removed whose record_id, primary_id, from_id, to_id or (for names) id is
erased, and with erased identities removed from every other line's related_ids. The lake
applies that to its landing tables (and the ingest to lines landing later), so this rule is
the one that decides what the tables hold:

| stream | the line is erased when | else |
|---|---|---|
| records | record_id or primary_id is erased | erased identities leave related_ids |
| id_mutations | from_id or to_id is erased | |
| entity_names | id is erased | |

A stripped line keeps every byte but the removed elements of related_ids and one separator
each, so that its other fields, its payload in particular, read exactly as they landed.

A line that will be quarantined at parse (not UTF-8, not one JSON object, a top-level field
named twice) has no fields to go by, yet its text is kept in `ingest_errors`: it is erased when
any identity-shaped string token in it, or the value of a `record_id` key, is erased. Payload
values of a valid object are never matched: the tables are defined by the fields alone.

Pure Python: the Spark steps call it per line inside `mapInArrow`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from json.decoder import scanstring
from typing import Any, Literal

from profile_lake.erasure.hashing import ErasedSet
from profile_lake.project import identity_namespaces

VerdictKind = Literal["unchanged", "erased", "stripped"]


@dataclass(frozen=True)
class Verdict:
    """What becomes of a line: `line` is the new text of a stripped one."""

    kind: VerdictKind
    line: str | None = None


UNCHANGED = Verdict("unchanged")
ERASED = Verdict("erased")


@dataclass(frozen=True)
class StreamRule:
    """The fields of a stream's lines that name a person, by what they name."""

    identity_fields: tuple[str, ...]
    record_fields: tuple[str, ...] = ()
    # the array of identities whose erased elements are removed from a line that stays
    stripped_field: str | None = None


STREAM_RULES: dict[str, StreamRule] = {
    "records": StreamRule(("primary_id",), ("record_id",), "related_ids"),
    "id_mutations": StreamRule(("from_id", "to_id")),
    "entity_names": StreamRule(("id",)),
}


def judge_line(stream: str, line: str, erased: ErasedSet, *, is_valid_utf8: bool = True) -> Verdict:
    """The verdict on one landed `line` of `stream` against its tenant's `erased` set.

    `line` is the text as the landing table holds it (profile_lake.ingest.lines): a line that
    is not UTF-8 has its bad bytes as `\\xNN` escapes, and `is_valid_utf8` False, so that it is
    judged as the quarantined line it will be even where the escapes happen to read as JSON."""
    rule = stream_rule(stream)
    if erased.is_empty():
        return UNCHANGED
    members = _object_members(line) if is_valid_utf8 else None
    if members is None or _names_a_key_twice(members):
        return ERASED if _scan_finds_erased(line, rule, erased) else UNCHANGED
    fields = {member.key: member for member in members}
    if _names_erased(fields, rule, erased):
        return ERASED
    stripped = fields.get(rule.stripped_field) if rule.stripped_field else None
    return UNCHANGED if stripped is None else _strip_identities(line, stripped, erased)


def stream_rule(stream: str) -> StreamRule:
    try:
        return STREAM_RULES[stream]
    except KeyError:
        raise ValueError(
            f"no erasure rule for stream {stream!r}: one of {', '.join(STREAM_RULES)}"
        ) from None


def _names_erased(fields: dict[str, Member], rule: StreamRule, erased: ErasedSet) -> bool:
    """Whether a field naming a person names an erased one. A field of the wrong type (an
    array where a string belongs) quarantines the line but keeps its text, so every string
    within it counts."""
    identities = [fields[name].value for name in rule.identity_fields if name in fields]
    records = [fields[name].value for name in rule.record_fields if name in fields]
    return any(_any_erased_identity(value, erased) for value in identities) or any(
        erased.holds_record(text) for value in records for text in _strings_within(value)
    )


def _strip_identities(line: str, field: Member, erased: ErasedSet) -> Verdict:
    """`line` without the erased identities of the array `field`, removed in place. Only the
    string elements of an array can be removed so; an erased identity anywhere else in the
    field (a string where an array belongs, a nested array) erases the line."""
    if not isinstance(field.value, list):
        return ERASED if _any_erased_identity(field.value, erased) else UNCHANGED
    values = field.value
    if any(not isinstance(value, str) and _any_erased_identity(value, erased) for value in values):
        return ERASED
    gone = {
        index
        for index, value in enumerate(values)
        if isinstance(value, str) and erased.holds_identity(value)
    }
    if not gone:
        return UNCHANGED
    # where each element's text lies, read only for the few lines that lose one
    array_text = _without_elements(line, field, _array_elements(line, field.start), gone)
    return Verdict("stripped", line[: field.start] + array_text + line[field.end :])


def _any_erased_identity(value: Any, erased: ErasedSet) -> bool:
    return any(erased.holds_identity(text) for text in _strings_within(value))


def _without_elements(line: str, field: Member, elements: list[Member], gone: set[int]) -> str:
    """The text of the array `field` without the elements whose indexes are `gone`. A kept
    element keeps the separator before it, unless it becomes the first, so the text between
    two elements that were neighbours stays as it was and the array stays valid JSON."""
    kept = [index for index in range(len(elements)) if index not in gone]
    pieces = [line[field.start : elements[0].start]]  # '[' and the space after it
    for position, index in enumerate(kept):
        if position > 0:
            pieces.append(line[elements[index - 1].end : elements[index].start])
        pieces.append(line[elements[index].start : elements[index].end])
    pieces.append(line[elements[-1].end : field.end])  # the space before ']', and ']'
    return "".join(pieces)


# ----------------------------------------------------------------------- reading JSON with spans


@dataclass(frozen=True)
class Member:
    """A decoded JSON value and where its text lies in the line: `line[start:end]`. `key` is
    its name in an object ('' for an element of an array)."""

    key: str
    value: Any
    start: int
    end: int


def _reject_constant(name: str) -> None:
    # Python reads NaN and Infinity; Spark does not, and quarantines the line
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_WHITESPACE = re.compile(r"[ \t\n\r]*")  # JSON's, which Python's json module also uses


def _skip_whitespace(text: str, position: int) -> int:
    match = _WHITESPACE.match(text, position)
    return match.end() if match else position


def _object_members(line: str) -> list[Member] | None:
    """The top-level members of `line`, in order, repeats included; None when the line is not
    exactly one JSON object (it will be quarantined at parse)."""
    try:
        start = _skip_whitespace(line, 0)
        members, end = _container(line, start, "{", "}")
    except (ValueError, RecursionError):  # malformed, or nested past Python's recursion limit
        return None
    return members if _skip_whitespace(line, end) == len(line) else None


def _array_elements(line: str, start: int) -> list[Member]:
    """The elements of the valid JSON array whose text starts at `start`."""
    elements, _ = _container(line, start, "[", "]")
    return elements


def _container(text: str, start: int, opening: str, closing: str) -> tuple[list[Member], int]:
    """The members of the object (or elements of the array) whose `opening` is at `start`, and
    the position after its `closing`; a ValueError when the text is not valid JSON there."""
    if not text.startswith(opening, start):
        raise ValueError(f"expected {opening!r} at {start}")
    found: list[Member] = []
    position = _skip_whitespace(text, start + 1)
    if text.startswith(closing, position):
        return found, position + 1
    while True:
        key = ""
        if opening == "{":
            if not text.startswith('"', position):
                raise ValueError(f"expected a key at {position}")
            key, position = scanstring(text, position + 1)
            position = _skip_whitespace(text, position)
            if not text.startswith(":", position):
                raise ValueError(f"expected ':' at {position}")
            position = _skip_whitespace(text, position + 1)
        value, end = _DECODER.raw_decode(text, position)
        found.append(Member(key, value, position, end))
        position = _skip_whitespace(text, end)
        if text.startswith(",", position):
            position = _skip_whitespace(text, position + 1)
        elif text.startswith(closing, position):
            return found, position + 1
        else:
            raise ValueError(f"expected ',' or {closing!r} at {position}")


def _names_a_key_twice(members: list[Member]) -> bool:
    return len({member.key for member in members}) != len(members)


def _strings_within(value: Any) -> Iterator[str]:
    """Every string in a decoded JSON value, object keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings_within(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings_within(item)


# ------------------------------------------------------------ scanning a line that is not JSON

# the text up to the next quote that no backslash escapes, or to the end (where a backslash
# may be the last character of a cut line)
_UNQUOTED_RUN = re.compile(r'(?:[^"\\]+|\\.|\\\Z)*', re.DOTALL)
_JSON_ESCAPE = re.compile(
    r"\\(?:u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"
    r"|u([0-9a-fA-F]{4})"
    r'|(["\\/bfnrt]))'
)
_SHORT_ESCAPES = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
_KEY_SEPARATOR = re.compile(r"[ \t\n\r]*:[ \t\n\r]*")


def _scan_finds_erased(line: str, rule: StreamRule, erased: ErasedSet) -> bool:
    """Whether a line that is no JSON object holds an erased identity as a string token, or an
    erased record_id as the value of a record field's key.

    Its quotes may not pair up (a truncated line, a stray quote), so no piece of text between
    two unescaped quotes is assumed to be outside a string: each is read as a token. Escapes
    are decoded where they are valid JSON and kept as they are elsewhere (a `\\xNN` of a line
    that is not UTF-8)."""
    pieces = [_unescape_leniently(piece) for piece in _between_quotes(line)]
    identity = _identity_shape()
    for index, piece in enumerate(pieces):
        if identity.match(piece) and erased.holds_identity(piece):
            return True
        if (
            piece in rule.record_fields
            and index + 2 < len(pieces)
            and _KEY_SEPARATOR.fullmatch(pieces[index + 1])
            and erased.holds_record(pieces[index + 2])
        ):
            return True
    return False


def _between_quotes(line: str) -> list[str]:
    """The pieces of `line` between unescaped quotes, with the text before the first quote
    and after the last."""
    pieces: list[str] = []
    position = 0
    while position <= len(line):
        run = _UNQUOTED_RUN.match(line, position)
        end = run.end() if run else position
        pieces.append(line[position:end])
        position = end + 1  # past the quote
    return pieces


def _unescape_leniently(text: str) -> str:
    """`text` with its valid JSON escapes decoded (a surrogate pair as one character) and
    anything else kept as written."""

    def decoded(escape: re.Match[str]) -> str:
        high, low, unit, short = escape.groups()
        if high is not None:
            return (
                (chr(int(high, 16)) + chr(int(low, 16)))
                .encode("utf-16-le", "surrogatepass")
                .decode("utf-16-le")
            )
        if unit is not None:
            return chr(int(unit, 16))
        return _SHORT_ESCAPES[short]

    return _JSON_ESCAPE.sub(decoded, text) if "\\" in text else text


@cache
def _identity_shape() -> re.Pattern[str]:
    """An identity's namespace and colon (dbt's var identity_namespaces). Only a cheap filter
    before hashing: a token matches only if its hash is an erased identity's, so its value's
    length is not checked."""
    namespaces = "|".join(re.escape(namespace) for namespace in identity_namespaces())
    return re.compile(f"(?:{namespaces}):")
