"""A progress line for long steps: batches done of total, rows, rows per second."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import TextIO


def progress_line(step: str, done: int, total: int, rows: int, seconds: float) -> str:
    """`hydrate [######------] 3/10 batches, 12,000 rows, 4,100 rows/s`"""
    width = 20
    filled = width * done // total if total else width
    rate = rows / seconds if seconds > 0 else 0.0
    return (
        f"{step} [{'#' * filled}{'-' * (width - filled)}] {done}/{total} batches, "
        f"{rows:,} rows, {rate:,.0f} rows/s"
    )


@dataclass
class Progress:
    step: str
    total: int
    stream: TextIO = field(default_factory=lambda: sys.stderr)
    done: int = 0
    rows: int = 0
    started: float = field(default_factory=time.monotonic)

    def advance(self, rows: int) -> str:
        self.done += 1
        self.rows += rows
        line = progress_line(
            self.step, self.done, self.total, self.rows, time.monotonic() - self.started
        )
        print(line, file=self.stream, flush=True)
        return line
