"""Ageing a Delta table's history in tests: DESCRIBE HISTORY, and Delta's retention checks
(VACUUM's, and the refusal to read a change feed from a version older than
delta.deletedFileRetentionDuration), read a commit's time from its file's modification time
on a table without in-commit timestamps."""

from __future__ import annotations

import os
import time
from pathlib import Path

from pyspark.sql import SparkSession


def table_location(spark: SparkSession, table: str) -> Path:
    location = spark.sql(f"describe detail {table}").first()["location"]
    return Path(location.removeprefix("file:"))


def date_commits_back(table_location: Path, days: int, files: str = "*.json") -> None:
    """Dates every commit of a Delta table `days` back. `files`: which files of the log (`*`:
    checkpoints and checksums too, as Delta's log clean-up, which removes what is older than
    delta.logRetentionDuration, reads their times)."""
    then = time.time() - days * 86400
    for log_file in (table_location / "_delta_log").glob(files):
        os.utime(log_file, (then, then))
