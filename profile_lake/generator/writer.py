"""Landing files: rolled every N lines, gzipped every Nth file, named after free part numbers.

A file is written under a hidden temporary name and renamed when complete, so a reader never
sees half a file, and an existing file is never touched.
"""

from __future__ import annotations

import gzip
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from profile_lake.generator.bad_lines import BadLine
from profile_lake.generator.tenants import STREAMS

PART_NAME = re.compile(r"^part-(\d+)\.jsonl(\.gz)?$")
BUFFER_BYTES = 1 << 20
PROGRESS_STEP = 10_000


def next_free_part(root: Path) -> int:
    """The first part number above every part file already in any stream folder."""
    taken = [
        int(match.group(1))
        for stream in STREAMS
        if (root / stream).is_dir()
        for entry in os.scandir(root / stream)
        if (match := PART_NAME.match(entry.name))
    ]
    return max(taken) + 1 if taken else 0


@dataclass
class Progress:
    """Lines written so far, reported on stderr every `every` lines unless quiet."""

    quiet: bool
    every: int = 100_000
    lines: int = 0
    bytes: int = 0
    started: float = field(default_factory=time.perf_counter)
    _next: int = 0

    def __post_init__(self) -> None:
        self._next = self.every

    def add(self, lines: int, size: int) -> None:
        self.lines += lines
        self.bytes += size
        if self.lines >= self._next:
            self._next = (self.lines // self.every + 1) * self.every
            self.report("written")

    def elapsed(self) -> float:
        return max(time.perf_counter() - self.started, 1e-9)

    def report(self, what: str) -> None:
        if self.quiet:
            return
        seconds = self.elapsed()
        print(
            f"profile-lake generate: {self.lines:,} lines {what} in {seconds:.1f} s "
            f"({self.lines / seconds:,.0f} lines/s, {self.bytes / seconds / 1e6:.1f} MB/s)",
            file=sys.stderr,
        )


@dataclass
class FileStats:
    """What one landing file holds."""

    file: str  # relative to the landing root, e.g. records/part-00000.jsonl
    lines: int = 0
    good: int = 0
    bad: int = 0
    duplicates: int = 0  # good lines that repeat an earlier line exactly
    bytes: int = 0  # uncompressed


@dataclass(frozen=True)
class BadEntry:
    """Where a bad line landed and what the pipeline must report for it."""

    stream: str
    file: str
    line: int
    bad: BadLine


def write_file(path: Path, chunks: list[bytes], compress: bool) -> None:
    """Write a complete file under a hidden name, then rename it into place."""
    temporary = path.with_name(f".{path.name}.tmp")
    with open(temporary, "wb", buffering=BUFFER_BYTES) as raw:
        if compress:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed:
                packed.write(b"\n".join(chunks) + b"\n")
        else:
            raw.write(b"\n".join(chunks) + b"\n")
    os.replace(temporary, path)


class StreamWriter:
    """Writes one stream's lines into part files of at most `lines_per_file` lines."""

    def __init__(
        self,
        root: Path,
        stream: str,
        first_part: int,
        lines_per_file: int,
        gzip_every: int,
        progress: Progress,
    ) -> None:
        self.root = root
        self.stream = stream
        self.part = first_part
        self.lines_per_file = lines_per_file
        self.gzip_every = gzip_every
        self.progress = progress
        self.files: list[FileStats] = []
        self.bad: list[BadEntry] = []
        self._chunks: list[bytes] = []
        self._current: FileStats | None = None
        self._reported = (0, 0)  # lines and bytes of the current file already reported
        (root / stream).mkdir(parents=True, exist_ok=True)

    def _compress(self) -> bool:
        return self.gzip_every > 0 and (len(self.files) + 1) % self.gzip_every == 0

    def _open(self) -> FileStats:
        suffix = ".jsonl.gz" if self._compress() else ".jsonl"
        current = FileStats(f"{self.stream}/part-{self.part:05d}{suffix}")
        self._current = current
        return current

    def write(self, line: bytes, bad: BadLine | None, duplicate: bool) -> None:
        current = self._current or self._open()
        self._chunks.append(line)
        current.lines += 1
        current.bytes += len(line) + 1
        if current.lines % PROGRESS_STEP == 0:
            self._report()
        if bad is None:
            current.good += 1
            current.duplicates += duplicate
        else:
            current.bad += 1
            self.bad.append(BadEntry(self.stream, current.file, current.lines, bad))
        if current.lines >= self.lines_per_file:
            self._flush()

    def _report(self) -> None:
        """Tell the progress meter about the lines of the current file not yet reported."""
        current = self._current
        if current is not None:
            lines, size = current.lines - self._reported[0], current.bytes - self._reported[1]
            self.progress.add(lines, size)
            self._reported = (current.lines, current.bytes)

    def _flush(self) -> None:
        current = self._current
        if current is None:
            return
        write_file(self.root / current.file, self._chunks, current.file.endswith(".gz"))
        self._report()
        self.files.append(current)
        self.part += 1
        self._chunks = []
        self._current = None
        self._reported = (0, 0)

    def close(self) -> list[FileStats]:
        self._flush()
        return self.files
