"""A copy of the project for a test lake whose seeds are its own (tenants, identity rules):
models, macros and the package stay the repository's. dbt runs on it with
`run_dbt(..., project_dir=copy)`."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

from profile_lake.project import PROJECT_DIR

DBT_FOLDERS = ("models", "python_models", "macros", "snapshots", "tests")


def project_copy(root: Path, seeds: Mapping[str, str]) -> Path:
    """The project's dbt files in `root`/project, with the repository's seeds but those named
    in `seeds` (file name in the seeds folder -> its CSV text)."""
    copy = root / "project"
    copy.mkdir()
    for name in DBT_FOLDERS:
        shutil.copytree(PROJECT_DIR / name, copy / name)
    shutil.copy(PROJECT_DIR / "dbt_project.yml", copy / "dbt_project.yml")
    shutil.copytree(PROJECT_DIR / "seeds", copy / "seeds")
    for name, text in seeds.items():
        (copy / "seeds" / name).write_text(text)
    return copy
