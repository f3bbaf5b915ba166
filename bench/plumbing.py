"""Shared plumbing of the benchmarks (bench/bench_*.py): the project's SparkSession on a scratch
lake, a timer, a report of two timings, and dbt run in-process as the tests run it.

A script's own folder (bench/) is on its path, not the repository root: this module puts the
root there too, for the tests' dbt runner (pytests/support/dbt_runner.py), which the dbt
benchmarks share with the tests.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.append(str(REPO_ROOT))


def bench_session(app: str, extra_jars: Iterable[str] = ()) -> Any:
    """The `local` target's SparkSession (profile_lake.spark.session) with `extra_jars`, its
    lake in a temp folder (or PROFILE_LAKE_HOME) and its catalog in memory (no metastore)."""
    from profile_lake.spark.session import profile_session

    home = Path(os.environ.get("PROFILE_LAKE_HOME") or tempfile.mkdtemp(prefix=f"bench-{app}-"))
    os.environ["PROFILE_LAKE_HOME"] = str(home)
    spark = profile_session(
        "local",
        extra_jars,
        **{"spark.app.name": f"bench-{app}", "spark.sql.catalogImplementation": "in-memory"},
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run_dbt(args: list[str], **options: Any) -> Any:
    """`pytests.support.dbt_runner.run_dbt`: dbt in-process on this project, on this process's
    SparkSession, with the committed profile."""
    from pytests.support.dbt_runner import run_dbt as run_in_process

    return run_in_process(args, **options)


def timed(action: Callable[[], Any], repeat: int = 1) -> tuple[float, Any]:
    """Best wall time of `repeat` runs of `action`, and its last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = action()
        best = min(best, time.perf_counter() - start)
    return best, result


def report(title: str, ours: tuple[str, float], theirs: tuple[str, float], goal: str) -> None:
    """Print both timings and their ratio."""
    ratio = theirs[1] / ours[1] if ours[1] > 0 else float("inf")
    print(f"{title}")
    print(f"  {ours[0]:<44} {ours[1]:9.3f} s")
    print(f"  {theirs[0]:<44} {theirs[1]:9.3f} s")
    print(f"  ratio {ratio:8.1f}x   (goal: {goal})")
