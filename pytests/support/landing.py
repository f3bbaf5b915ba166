"""Landing files for tests: one JSON-lines part per stream; which of their lines the landing
tables hold."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import pyarrow as pa

from profile_lake.delta_reader import read_delta
from profile_lake.ingest.lines import STREAMS
from pytests.support.expected import landing_lines


def write_landing(landing: Path, part: Mapping[str, Sequence[dict]], name: str) -> None:
    """Write `part` (stream -> messages) as `<landing>/<stream>/<name>.jsonl`, one message per
    line; a stream with no message gets no file."""
    for stream, messages in part.items():
        folder = landing / stream
        folder.mkdir(parents=True, exist_ok=True)
        if messages:
            lines = "".join(json.dumps(message) + "\n" for message in messages)
            (folder / f"{name}.jsonl").write_text(lines)


def landed_lines(landing: Path) -> Counter:
    """(source_file, line_number) -> 1 for every line of every landing file."""
    return Counter(key for stream in STREAMS for key in landing_lines(landing, stream))


def staged_lines(warehouse: Path, schema: str) -> Counter:
    """(source_file, line_number) -> how many times it is in the landing tables of `schema`."""
    found: Counter = Counter()
    for stream in STREAMS:
        found.update(line_keys(read_delta(warehouse / f"{schema}_landing.db" / stream)))
    return found


def line_keys(table: pa.Table) -> list[tuple[str, int]]:
    """(source_file, line_number) of each row of a table of staged lines."""
    return list(
        zip(table["source_file"].to_pylist(), table["line_number"].to_pylist(), strict=True)
    )


def ingest_batches(warehouse: Path, schema: str) -> int:
    """How many ingest micro-batches staged lines in the landing tables of `schema`."""
    batches: set[int] = set()
    for stream in STREAMS:
        table = read_delta(warehouse / f"{schema}_landing.db" / stream)
        batches.update(table["ingest_batch_id"].to_pylist())
    return len(batches)
