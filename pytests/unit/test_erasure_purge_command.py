"""`profile-lake purge`: the dbt command it runs. No Spark (the purge itself is tested on a
lake: pytests/integration/test_erasure_applications.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from profile_lake.cli import main
from profile_lake.erasure.purge_command import purge_args


def test_the_purge_is_the_run_operation_on_the_given_project_and_target() -> None:
    args = purge_args("shared", Path("/p"), Path("/p/profiles"))
    assert args[:2] == ["run-operation", "purge_history"]
    assert args[args.index("--project-dir") + 1] == "/p"
    assert args[args.index("--profiles-dir") + 1] == "/p/profiles"
    assert args[args.index("--target") + 1] == "shared"
    assert "--target" not in purge_args(None, Path("/p"), Path("/p/profiles"))


def test_the_command_is_listed(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "purge" in capsys.readouterr().out
