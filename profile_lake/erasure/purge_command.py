"""`profile-lake purge`: purge the lake's history now (SPEC.md section 7, docs/erasure.md).

Runs `dbt run-operation purge_history` in this process, on the project and profiles of
DBT_PROJECT_DIR and DBT_PROFILES_DIR (default: this checkout's). It waits for running builds
to end (it takes every run lock) and rewrites every Delta table of the lake, so it is slow on
a big lake: minutes, not seconds."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from profile_lake.project import PROJECT_DIR


def purge_args(target: str | None, project_dir: Path, profiles_dir: Path) -> list[str]:
    args = ["run-operation", "purge_history"]
    args += ["--project-dir", str(project_dir), "--profiles-dir", str(profiles_dir)]
    return args + (["--target", target] if target else [])


def add_purge_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", help="the dbt target (default: the profile's)")


def run_purge(args: argparse.Namespace) -> int:
    from dbt.cli.main import dbtRunner

    project_dir = Path(os.environ.get("DBT_PROJECT_DIR") or PROJECT_DIR)
    profiles_dir = Path(os.environ.get("DBT_PROFILES_DIR") or PROJECT_DIR / "profiles")
    result = dbtRunner().invoke(purge_args(args.target, project_dir, profiles_dir))
    return 0 if result.success else 1
