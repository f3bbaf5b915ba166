"""Shared plumbing of the identity benchmarks (bench/bench_identity_*.py): a SparkSession with
the committed local profile's settings, a scratch lake, and a timer."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any


def bench_session(app: str, extra_jars: Iterable[str] = (), **settings: str) -> Any:
    """A SparkSession like the `local` target's (Delta, 2 cores, AQE on), its lake in a temp
    folder (or PROFILE_LAKE_HOME), plus `extra_jars` and `settings`."""
    from dbt.adapters.profile_lake_spark.connections import default_jars_dir, jar_paths
    from pyspark.sql import SparkSession

    from profile_lake.spark.session import profile_target

    home = Path(os.environ.get("PROFILE_LAKE_HOME") or tempfile.mkdtemp(prefix=f"bench-{app}-"))
    os.environ["PROFILE_LAKE_HOME"] = str(home)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    params = dict(profile_target("local")["server_side_parameters"])
    params.pop("spark.hadoop.javax.jdo.option.ConnectionURL", None)  # no metastore needed
    params["spark.jars"] = ",".join([*jar_paths(default_jars_dir()), *extra_jars])
    params["spark.app.name"] = f"bench-{app}"
    params.update(settings)
    builder = SparkSession.builder
    for key, value in params.items():
        builder = builder.config(key, str(value))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


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
