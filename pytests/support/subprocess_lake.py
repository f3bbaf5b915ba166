"""A lake of its own, built by `dbt build` subprocesses that a test can SIGKILL at a chosen moment.

The moment is a condition on what the run has written so far (streaming checkpoint entries,
Delta commits), polled from the files while the run goes on: the run owns the lake's metastore
(embedded Derby admits one process), so the test reads the tables with `deltalake`.
"""

from __future__ import annotations

import signal
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from profile_lake.ingest.lines import STREAMS
from pytests.support.dbt_subprocess import DEFAULT_TIMEOUT_S, DbtOutcome, DbtSubprocess

POLL_SECONDS = 0.05
KILLED = -signal.SIGKILL  # the exit code of a killed run


@dataclass(frozen=True)
class SubprocessLake:
    """`dbt build <build_args>` runs on the lake at `home`, reading `landing`, into `schema`."""

    home: Path
    landing: Path
    schema: str
    build_args: tuple[str, ...] = ()

    @property
    def dbt(self) -> DbtSubprocess:
        return DbtSubprocess(
            self.home,
            env={"PROFILE_LAKE_LANDING": str(self.landing), "PROFILE_LAKE_SCHEMA": self.schema},
        )

    @property
    def warehouse(self) -> Path:
        return self.home / "warehouse"

    @property
    def checkpoint(self) -> Path:
        return self.home / "checkpoints" / "landing_ingest" / f"{self.schema}_landing" / "stream"

    def table_path(self, table: str, layer: str = "") -> Path:
        """A table's folder; `layer` is the schema suffix (landing, staging, intermediate)."""
        return self.warehouse / f"{self.schema}{'_' + layer if layer else ''}.db" / table

    def build(self, kill_when: Callable[[], bool] | None = None) -> DbtOutcome:
        """Run `dbt build`; with `kill_when`, SIGKILL its process group (dbt, the JVM, the
        Python workers) as soon as the condition holds (returncode KILLED)."""
        running = self.dbt.start(["build", *self.build_args])
        while kill_when is not None and running.poll() is None:
            if kill_when():
                running.kill()
                break
            if time.monotonic() - running.started > DEFAULT_TIMEOUT_S:
                break  # wait() kills it and raises
            time.sleep(POLL_SECONDS)
        return running.wait()

    def delta_commits(self, table: str, layer: str = "") -> int:
        return delta_commits(self.table_path(table, layer))

    def landing_commits(self) -> int:
        return sum(self.delta_commits(stream, "landing") for stream in STREAMS)

    def checkpoint_entries(self, folder: str) -> int:
        path = self.checkpoint / folder
        return sum(1 for p in path.iterdir() if p.name.isdigit()) if path.is_dir() else 0


def delta_commits(table_dir: Path) -> int:
    """How many commits (`_delta_log/<version>.json`) a Delta table has; 0 if none."""
    log = table_dir / "_delta_log"
    return len(list(log.glob("*.json"))) if log.is_dir() else 0


def row_multiset(table: pa.Table, columns: Sequence[str]) -> Counter:
    """The rows of `table` restricted to `columns`, as a multiset (lists become tuples)."""

    def frozen(value: object) -> object:
        return tuple(value) if isinstance(value, list) else value

    return Counter(
        tuple(frozen(value) for value in row)
        for row in zip(*(table[name].to_pylist() for name in columns), strict=True)
    )
