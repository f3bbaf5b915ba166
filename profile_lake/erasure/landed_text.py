"""A landed line's text without the erased identities among its related_ids (SPEC.md section 7).

The landing tables keep each line as landed, and a full refresh stages them again from that
text, so a line relating to an erased person is rewritten: its top-level `related_ids` value
is replaced by the ids that stay, and every other byte is kept. Parsing the line and writing
it out again would not do: numbers such as `1.10` and key order would change, and with them
the payload a full refresh stages.

Pure: profile_lake.spark.erasure_rewrite calls it on the few lines an erasure touches.
"""

from __future__ import annotations

import json
from json.decoder import scanstring

RELATED_FIELD = "related_ids"
_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\n\r"


def _skip_whitespace(text: str, index: int) -> int:
    while index < len(text) and text[index] in _WHITESPACE:
        index += 1
    return index


def top_level_spans(text: str) -> list[tuple[str, int, int]]:
    """(key, start, end) of each top-level value of a JSON object's text, in order; raises
    ValueError when the text is not one JSON object."""
    index = _skip_whitespace(text, 0)
    if index >= len(text) or text[index] != "{":
        raise ValueError("not a JSON object")
    index = _skip_whitespace(text, index + 1)
    spans: list[tuple[str, int, int]] = []
    if index < len(text) and text[index] == "}":
        return spans
    while True:
        if index >= len(text) or text[index] != '"':
            raise ValueError(f"expected a key at {index}")
        key, index = scanstring(text, index + 1)
        index = _skip_whitespace(text, index)
        if index >= len(text) or text[index] != ":":
            raise ValueError(f"expected ':' at {index}")
        start = _skip_whitespace(text, index + 1)
        _, end = _DECODER.raw_decode(text, start)
        spans.append((key, start, end))
        index = _skip_whitespace(text, end)
        if index < len(text) and text[index] == ",":
            index = _skip_whitespace(text, index + 1)
            continue
        if index < len(text) and text[index] == "}":
            return spans
        raise ValueError(f"expected ',' or '}}' at {index}")


def without_erased_related(text: str | None, erased: frozenset[str]) -> str | None:
    """`text` with the `erased` identities left out of its top-level related_ids array (every
    other byte as it was); unchanged when it holds none of them or is not a JSON object."""
    if text is None or not erased:
        return text
    try:
        spans = top_level_spans(text)
    except ValueError:
        return text
    rewritten = text
    for key, start, end in reversed(spans):
        if key != RELATED_FIELD:
            continue
        value = json.loads(text[start:end])
        if not isinstance(value, list):
            continue
        kept = [item for item in value if not (isinstance(item, str) and item in erased)]
        if len(kept) != len(value):
            replacement = json.dumps(kept, ensure_ascii=False, separators=(",", ":"))
            rewritten = rewritten[:start] + replacement + rewritten[end:]
    return rewritten
