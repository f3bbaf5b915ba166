"""Which files hold given values: Parquet files read by value (their pages are compressed) and
as bytes (their footers' statistics are not), every other file as bytes."""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Sequence
from pathlib import Path

import pyarrow.parquet as pq


def file_texts(path: Path) -> list[str]:
    data = path.read_bytes()
    texts = [data.decode("utf-8", errors="replace")]
    if data[:4] == b"PAR1":
        texts.append(repr(pq.read_table(path).to_pylist()))
    if data[:2] == b"\x1f\x8b":
        texts.append(gzip.decompress(data).decode("utf-8", errors="replace"))
    return texts


def files_holding(roots: Iterable[Path], values: Sequence[str]) -> dict[str, list[str]]:
    """File -> the `values` it holds, for every file under `roots` holding one."""
    found: dict[str, list[str]] = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            try:
                if not path.is_file():
                    continue
                texts = file_texts(path)
            except FileNotFoundError:  # removed meanwhile by the lake's own clean-up
                continue
            held = [value for value in values if any(value in text for text in texts)]
            if held:
                found[str(path)] = held
    return found
