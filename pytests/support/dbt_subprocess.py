"""dbt in subprocesses: each run its own process, JVM and SparkSession, as in production.

Tests need this where one process is not enough: several dbt processes on one lake at once
(the `shared` target's PostgreSQL metastore), runs killed part-way, a run that must not share
the test session's SparkSession. Every run gets its own target and log folders (concurrent runs
must not write one manifest) and its output in `<run dir>/output.log`; the runs of one
DbtSubprocess share a lake (PROFILE_LAKE_HOME), a target and an environment.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytests.support.dbt_runner import (
    PARTIAL_PARSE_FILE,
    PROFILES_DIR,
    PROJECT_DIR,
    UNIT_TESTS_LEFT_OUT,
    keep_partial_parse,
)
from pytests.support.jvm import TEST_JVM_OPTIONS

DBT = Path(sys.executable).with_name("dbt")
# a guard against a hung run: a whole build in a new JVM beside the other test worker can take
# ten minutes on two cores
DEFAULT_TIMEOUT_S = 1200.0
# Inherited variables that would point a run at another lake, project or target, or (when the
# parent runs under a pyspark launcher) at the parent's JVM gateway.
PARENT_ONLY_ENV = (
    "PYSPARK_GATEWAY_PORT",
    "PYSPARK_GATEWAY_SECRET",
    "PROFILE_LAKE_HOME",
    "PROFILE_LAKE_TARGET",
    "DBT_PROFILES_DIR",
    "DBT_PROJECT_DIR",
    "DBT_TARGET_PATH",
    "DBT_LOG_PATH",
)


class DbtSubprocessError(AssertionError):
    """A dbt subprocess did not end as expected."""


@dataclass(frozen=True)
class DbtOutcome:
    args: tuple[str, ...]
    returncode: int
    seconds: float
    run_dir: Path

    @property
    def success(self) -> bool:
        return self.returncode == 0

    @property
    def output_path(self) -> Path:
        return self.run_dir / "output.log"

    def output(self) -> str:
        return self.output_path.read_text(errors="replace")

    def tail(self, chars: int = 6000) -> str:
        return self.output()[-chars:]

    def describe(self) -> str:
        return f"dbt {' '.join(self.args)}: exit {self.returncode} after {self.seconds:.1f}s"


class RunningDbt:
    """A started dbt subprocess (its own process group: dbt, the JVM, Python workers)."""

    def __init__(
        self,
        args: tuple[str, ...],
        process: subprocess.Popen[bytes],
        run_dir: Path,
        partial_parse_cache: Path | None,
    ) -> None:
        self.args = args
        self.process = process
        self.run_dir = run_dir
        self.started = time.monotonic()
        self.ended: float | None = None
        self._partial_parse_cache = partial_parse_cache

    def poll(self) -> int | None:
        """The exit code once the run has ended (noting when: seconds count to then)."""
        returncode = self.process.poll()
        if returncode is not None and self.ended is None:
            self.ended = time.monotonic()
        return returncode

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Signal the whole process group (SIGKILL: as if the machine died)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, sig)

    def wait(self, timeout: float = DEFAULT_TIMEOUT_S) -> DbtOutcome:
        """Wait for the run to end; `timeout` seconds after its start, kill it and raise."""
        remaining = timeout - (time.monotonic() - self.started)
        try:
            self.process.wait(timeout=max(0.0, remaining))
        except subprocess.TimeoutExpired:
            self.kill()
            self.process.wait()
            outcome = self._outcome(self.process.returncode)
            raise DbtSubprocessError(
                f"dbt {' '.join(self.args)} ran over {timeout:.0f}s\n{outcome.tail()}"
            ) from None
        outcome = self._outcome(self.process.returncode)
        if outcome.success:
            self._keep_partial_parse()
        return outcome

    def _outcome(self, returncode: int) -> DbtOutcome:
        self.poll()
        seconds = (self.ended or time.monotonic()) - self.started
        return DbtOutcome(self.args, returncode, seconds, self.run_dir)

    def _keep_partial_parse(self) -> None:
        """Later runs start from this run's parse (dbt checks it is still valid)."""
        if self._partial_parse_cache is not None:
            keep_partial_parse(self.run_dir / "target", self._partial_parse_cache)


@dataclass(frozen=True)
class DbtSubprocess:
    """dbt runs in subprocesses on one lake: `PROFILE_LAKE_HOME=home`, `--target target`, and
    `env` (e.g. PROFILE_LAKE_SCHEMA, PROFILE_LAKE_LANDING, the metastore's variables)."""

    home: Path
    target: str = "local"
    env: Mapping[str, str] = field(default_factory=dict)
    driver_memory: str = "2g"

    @property
    def runs_dir(self) -> Path:
        return self.home / "dbt-runs"

    @property
    def partial_parse_cache(self) -> Path:
        return self.runs_dir / PARTIAL_PARSE_FILE

    def environment(self) -> dict[str, str]:
        inherited = {key: value for key, value in os.environ.items() if key not in PARENT_ONLY_ENV}
        return {
            "PROFILE_LAKE_JVM_OPTIONS": TEST_JVM_OPTIONS,
            **UNIT_TESTS_LEFT_OUT,
            **inherited,
            "PROFILE_LAKE_HOME": str(self.home),
            "PROFILE_LAKE_TARGET": self.target,
            "PROFILE_LAKE_DRIVER_MEMORY": self.driver_memory,
            "DBT_PROFILES_DIR": str(PROFILES_DIR),
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
            "PYSPARK_PYTHON": sys.executable,
            **self.env,
        }

    def command(self, args: Sequence[str], run_dir: Path) -> list[str]:
        return [
            str(DBT),
            *args,
            *("--project-dir", str(PROJECT_DIR)),
            *("--profiles-dir", str(PROFILES_DIR)),
            *("--target", self.target),
            *("--target-path", str(run_dir / "target")),
            *("--log-path", str(run_dir / "logs")),
        ]

    def start(self, args: Sequence[str]) -> RunningDbt:
        """Start `dbt <args>` and return at once."""
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        run_dir = Path(tempfile.mkdtemp(prefix=f"{args[0]}-", dir=self.runs_dir))
        if self.partial_parse_cache.exists():
            (run_dir / "target").mkdir()
            shutil.copyfile(self.partial_parse_cache, run_dir / "target" / PARTIAL_PARSE_FILE)
        with (run_dir / "output.log").open("wb") as output:
            # cwd: the profile's relative defaults (.lake, sample/landing) are the project's.
            process = subprocess.Popen(
                self.command(args, run_dir),
                cwd=PROJECT_DIR,
                env=self.environment(),
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return RunningDbt(tuple(args), process, run_dir, self.partial_parse_cache)

    def run(
        self,
        args: Sequence[str],
        *,
        expect_success: bool = True,
        timeout: float = DEFAULT_TIMEOUT_S,
    ) -> DbtOutcome:
        """Run `dbt <args>` to its end; raise if it succeeds or fails unexpectedly."""
        return expect(self.start(args).wait(timeout), success=expect_success)


def expect(outcome: DbtOutcome, *, success: bool = True) -> DbtOutcome:
    if outcome.success != success:
        raise DbtSubprocessError(
            f"{outcome.describe()}, expected {'success' if success else 'failure'}\n"
            f"{outcome.tail()}"
        )
    return outcome
