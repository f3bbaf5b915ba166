"""Run dbt in this process (dbt's programmatic runner) against this project.

dbt-spark's session method creates one SparkSession per process, so every invocation made
through here shares it: the first one pays the JVM start, later ones do not.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml
from dbt.cli.main import dbtRunner, dbtRunnerResult
from dbt_common.events.base_types import EventMsg

from profile_lake.project import PROJECT_DIR
from profile_lake.spark.session import PROFILES_DIR

PARTIAL_PARSE_FILE = "partial_parse.msgpack"


# dbt's unit tests (`unit_tests:` in the models' YAML) check models' SQL on fixture rows. The
# sample lake's build runs them, as `dbt build` does for users; the tests' other runs, which
# test the pipeline rather than that SQL, leave them out (dbt's advice for production runs).
UNIT_TESTS_LEFT_OUT = {"DBT_EXCLUDE_RESOURCE_TYPES": "unit_test"}


class DbtInvocationError(AssertionError):
    """A dbt invocation did not end as expected."""


@dataclass(frozen=True)
class DbtRun:
    args: tuple[str, ...]
    result: dbtRunnerResult

    @property
    def success(self) -> bool:
        return self.result.success

    def messages(self) -> str:
        """The invocation's exception and its nodes' messages, where dbt puts an error (its
        log, on stdout, says more)."""
        outcome = self.result.result
        texts = [str(self.result.exception or "")]
        for item in getattr(outcome, "results", None) or []:
            texts.append(str(getattr(item, "message", "") or ""))
        return "\n".join(texts)

    def statuses(self) -> dict[str, str]:
        """Node name -> status (success, error, pass, fail, warn, skipped) of every node the
        command ran: exposures, which dbt lists with the status no-op, are left out."""
        outcome = self.result.result
        if outcome is None or not hasattr(outcome, "results"):
            return {}
        # a run-operation's result has no node: it is no node's status
        return {
            item.node.name: str(item.status)
            for item in outcome.results
            if getattr(item, "node", None) is not None and item.node.resource_type != "exposure"
        }


@contextmanager
def environment(overrides: Mapping[str, str]) -> Iterator[None]:
    """Set environment variables for the duration of a block (dbt reads them as env_var())."""
    saved = {name: os.environ.get(name) for name in overrides}
    os.environ.update(overrides)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_dbt(
    args: list[str],
    *,
    expect_pass: bool = True,
    env: Mapping[str, str] | None = None,
    target_path: Path | None = None,
    callbacks: Sequence[Callable[[EventMsg], None]] = (),
    unit_tests: bool = False,
    run_history: bool = False,
    project_dir: Path = PROJECT_DIR,
) -> DbtRun:
    """Invoke `dbt <args>` on this project (or a copy of it, `project_dir`) with the committed
    profile; `callbacks` get each event the invocation fires (its log lines among them); dbt's
    unit tests run only with `unit_tests`, the run-history hooks only with `run_history`."""
    full_args = [
        *with_run_history(args, run_history),
        "--project-dir",
        str(project_dir),
        "--profiles-dir",
        str(PROFILES_DIR),
    ]
    parsed: Path | None = None
    if target_path is not None:
        full_args += ["--target-path", str(target_path)]
        parsed = parse_cache_file(target_path, full_args, env or {})
        if parsed.exists():
            full_args += ["--partial-parse-file-path", str(parsed)]
    started, started_at = time.monotonic(), time.time()
    with environment({**({} if unit_tests else UNIT_TESTS_LEFT_OUT), **(env or {})}):
        result = dbtRunner(callbacks=list(callbacks)).invoke(full_args)
    if parsed is not None:
        keep_partial_parse(target_path, parsed, started_at)
    run = DbtRun(tuple(args), result)
    record_timing(run, time.monotonic() - started)
    if run.success != expect_pass:
        detail = result.exception or {k: v for k, v in run.statuses().items() if v != "success"}
        raise DbtInvocationError(
            f"dbt {' '.join(args)}: expected {'success' if expect_pass else 'failure'}, "
            f"got {'success' if run.success else 'failure'}: {detail}"
        )
    return run


def parse_cache_file(target_path: Path, args: Sequence[str], env: Mapping[str, str]) -> Path:
    """Where this invocation's parsed project is kept for the next one with the same vars.

    dbt parses the whole project again (several seconds) whenever `--vars` differ from the
    previous invocation's on the same target, and the tests' invocations on one lake alternate
    between a few sets of vars: one partial-parse file per set lets each reuse its own. dbt
    still checks every file, the profile and the env vars against the saved state."""
    given = args[args.index("--vars") + 1] if "--vars" in args else ""
    key = json.dumps([given, env.get("PROFILE_LAKE_SCHEMA"), env.get("PROFILE_LAKE_LANDING")])
    return target_path / "parse-cache" / f"{hashlib.sha256(key.encode()).hexdigest()[:16]}.msgpack"


def keep_partial_parse(target_path: Path, cache: Path, since: float = 0.0) -> None:
    """Keep the parse dbt wrote into `target_path` (after `since`) as `cache`, for later runs
    to start from (dbt checks it is still valid)."""
    written = target_path / PARTIAL_PARSE_FILE
    if not written.exists() or written.stat().st_mtime < since:
        return
    cache.parent.mkdir(parents=True, exist_ok=True)
    staging = cache.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    shutil.copyfile(written, staging)
    os.replace(staging, cache)


def with_run_history(args: Sequence[str], run_history: bool) -> list[str]:
    """`args` with var run_history set, merged into the command's own `--vars`. The tests that
    are not about the run history leave its hooks out: they cost a few Delta appends and
    queries per invocation, and test_observability covers them on the sample lake."""
    args = list(args)
    if "--vars" in args:
        position = args.index("--vars") + 1
        given = yaml.safe_load(args[position]) or {}
        args[position] = json.dumps({**given, "run_history": run_history})
        return args
    return [*args, "--vars", json.dumps({"run_history": run_history})]


def record_timing(run: DbtRun, seconds: float) -> None:
    """With PROFILE_LAKE_DBT_TIMINGS set to a file, append one JSON line per invocation: the
    test that made it, the command, its wall time and the time its nodes took by resource type
    (the rest is parsing, hooks and start-up), to see where a test suite's time goes."""
    log = os.environ.get("PROFILE_LAKE_DBT_TIMINGS")
    if not log:
        return
    by_type: dict[str, float] = {}
    for item in getattr(run.result.result, "results", None) or []:
        node = getattr(item, "node", None)  # a run-operation's result has none
        kind = str(node.resource_type) if node is not None else "operation"
        by_type[kind] = by_type.get(kind, 0.0) + float(item.execution_time or 0.0)
    line = {
        "test": os.environ.get("PYTEST_CURRENT_TEST", ""),
        "args": list(run.args),
        "seconds": round(seconds, 2),
        "nodes": {kind: round(total, 2) for kind, total in by_type.items()},
    }
    with open(log, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")
