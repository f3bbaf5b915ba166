"""Split a landed file into numbered lines, keeping lines that are not UTF-8 as escaped text.

Pure Python (no Spark) so the rules are unit tested on their own: the Spark ingest calls these
per file inside `mapInArrow`.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

STREAMS: tuple[str, ...] = ("records", "id_mutations", "entity_names", "erasures")
# Partition value for lines whose tenant cannot be read: outside the tenant pattern, so it can
# never collide with a real tenant.
UNREADABLE_TENANT = "~unreadable"


@dataclass(frozen=True)
class LandedLine:
    line_number: int  # 1-based; 0 for a problem of the whole file (an unreadable gzip)
    line: str  # the text; bytes that are not UTF-8 are kept as \\xNN escapes
    is_valid_utf8: bool
    line_bytes: int


def stream_of(path: str) -> str | None:
    """The stream a landed file belongs to: the name of the folder it sits in."""
    parts = path.rstrip("/").split("/")
    folder = parts[-2] if len(parts) >= 2 else ""
    return folder if folder in STREAMS else None


def decompress(path: str, content: bytes) -> bytes:
    return gzip.decompress(content) if path.endswith(".gz") else content


def split_lines(content: bytes) -> Iterator[LandedLine]:
    """Every line of a file, numbered from 1. A final newline ends the last line; it does not
    start an empty one. CRLF endings are accepted."""
    pieces = content.split(b"\n")
    if pieces and pieces[-1] == b"":
        pieces.pop()
    for number, raw in enumerate(pieces, start=1):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            text = raw.decode("utf-8")
            valid = True
        except UnicodeDecodeError:
            text = raw.decode("utf-8", errors="backslashreplace")
            valid = False
        yield LandedLine(number, text, valid, len(raw))


def landed_lines(path: str, content: bytes) -> Iterator[LandedLine]:
    """The lines of one landed file; an unreadable compressed file yields one line 0 that the
    parse step quarantines, so the file is still accounted for."""
    try:
        data = decompress(path, content)
    except (OSError, EOFError, zlib.error) as error:
        yield LandedLine(0, f"unreadable compressed file: {error}", False, len(content))
        return
    yield from split_lines(data)
