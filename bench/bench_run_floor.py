"""What one `dbt build` costs from the shell on the bundled sample, whatever landed.

A fresh lake under /tmp is built from sample/landing (the `make run` build), then:

(a) a run with no new files;
(b) a run with one new file of about 1,000 record lines (updates of the sample's records,
    new records, a few deletes);

then the same two inside one `profile-lake watch` process (its first run, the JVM's start,
is left out): (c) a run with no new files (`--every`), (d) a run with one new file.

Each of (a) and (b) is a `dbt build` in its own process, as a scheduler starts it. Every run
leaves dbt's unit tests out, as `make run` and a watcher do (CI runs them). For (a) and (b) the
script prints the wall seconds, the Spark SQL statements and Spark jobs the run executed
(counted from Spark's event log, PROFILE_LAKE_EVENT_LOG_DIR), its five costliest nodes, the
statements of each kind (the project's own SQL; Delta's table states rebuilt from the log, file
skipping by statistics, MERGE steps) and of each node (the adapter names a statement's node in
its Spark job description; Delta's own queries inherit it, so a MERGE's inner queries count to
their node; the hooks' statements and the session's count as `(no node)`); for (c) and (d)
the seconds of the watcher's progress line; then each figure against its goal: (a) at most
15 s, (b) at most 45 s and 250 statements, (c) at most 3 s, (d) at most 15 s, the fresh build
at most 60 s.

    .venv/bin/python bench/bench_run_floor.py [--repeats 1] [--keep] [--shell-only]

Run it alone on the machine (no other Spark or dbt job), and give the load average with it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[1]
DBT = PROJECT_DIR / ".venv" / "bin" / "dbt"
SAMPLE_LANDING = PROJECT_DIR / "sample" / "landing"
PROFILE_LAKE = PROJECT_DIR / ".venv" / "bin" / "profile-lake"
GOALS = {
    "fresh build": 60.0,
    "no new files": 15.0,
    "one new file": 45.0,
    "watch: no new": 3.0,
    "watch: one new": 15.0,
}
# Spark statements (Delta's own queries included) a run with one new file may take
ONE_FILE_STATEMENTS_GOAL = 250
WATCH_EVERY_S = 15
NEW_FILE_LINES = 1_000
SLOWEST = 5
DELTA_PREFIX = "Delta: "
SQL_START_EVENT = '"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"'


@dataclass
class Run:
    kind: str
    seconds: float
    statements: int
    jobs: int
    slowest: list[tuple[str, float]] = field(default_factory=list)
    per_node: Counter[str] = field(default_factory=Counter)
    per_kind: Counter[str] = field(default_factory=Counter)


def count_events(event_log_dir: Path) -> tuple[int, int, Counter[str], Counter[str]]:
    """SQL executions and jobs in the event log of the one application in `event_log_dir`
    (Spark 4 writes it as a folder of rolled files), the SQL executions per dbt node (the
    adapter names each statement's node in its description; Delta's own queries inherit it)
    and per kind (statement_kind)."""
    statements = jobs = 0
    per_node: Counter[str] = Counter()
    per_kind: Counter[str] = Counter()
    for path in sorted(p for p in event_log_dir.rglob("*") if p.is_file()):
        with path.open(errors="replace") as log:
            for line in log:
                event = line[:120]
                if SQL_START_EVENT in event:
                    statements += 1
                    description = json.loads(line).get("description") or ""
                    per_node[node_of(description)] += 1
                    per_kind[statement_kind(description)] += 1
                elif '"Event":"SparkListenerJobStart"' in event:
                    jobs += 1
    return statements, jobs, per_node, per_kind


def node_of(description: str) -> str:
    """`dbt: model.profile_lake.records` -> `records`; Delta's inner queries put `Delta: `
    before their parent's description and append their step (`Delta: dbt: model.x.records -
    MERGE operation - ...: Filtering files for query`); statements outside a node (hooks, the
    session's start) -> `(no node)`."""
    while description.startswith(DELTA_PREFIX):
        description = description.removeprefix(DELTA_PREFIX)
    if description.startswith("dbt: "):
        return description.removeprefix("dbt: ").split(" ", 1)[0].split(":")[0].split(".")[-1]
    return "(no node)"


def statement_kind(description: str) -> str:
    """What a statement is, from its description: the project's own SQL, or one of Delta's
    inner queries (a table's state rebuilt from its log at a new version, the files a scan
    reads chosen by their statistics, a MERGE's steps)."""
    if "Compute snapshot for version" in description:
        return "Delta: table state"
    if "Filtering files for query" in description:
        return "Delta: file skipping"
    if "MERGE operation" in description or "Writing Deletion Vectors" in description:
        return "Delta: MERGE steps"
    if description.startswith(DELTA_PREFIX):
        return "Delta: other"
    return "own SQL"


def wait_for_event_log(event_log_dir: Path, timeout_s: float = 60.0) -> None:
    """dbt's process exits before its JVM has closed the event log (the JVM stops on its own
    after its Python parent): wait until no part of the log is still in progress."""
    deadline = time.monotonic() + timeout_s
    while any(event_log_dir.rglob("*.inprogress")) and time.monotonic() < deadline:
        time.sleep(0.2)


def slowest_nodes(target: Path) -> list[tuple[str, float]]:
    results = json.loads((target / "run_results.json").read_text())["results"]
    timed = [(r["unique_id"].split(".")[-1], float(r["execution_time"] or 0.0)) for r in results]
    return sorted(timed, key=lambda item: -item[1])[:SLOWEST]


def lake_env(home: Path, landing: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PROFILE_LAKE_HOME": str(home / "lake"),
        "PROFILE_LAKE_LANDING": str(landing),
        "DBT_PROFILES_DIR": str(PROJECT_DIR / "profiles"),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "DBT_EXCLUDE_RESOURCE_TYPES": "unit_test",
    }


def build(kind: str, home: Path, landing: Path) -> Run:
    event_log = Path(tempfile.mkdtemp(prefix="events-", dir=home))
    target = home / "target"
    env = {**lake_env(home, landing), "PROFILE_LAKE_EVENT_LOG_DIR": str(event_log)}
    started = time.perf_counter()
    subprocess.run(
        [str(DBT), "build", "--target-path", str(target), "--log-path", str(home / "logs")],
        cwd=PROJECT_DIR,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    seconds = time.perf_counter() - started
    wait_for_event_log(event_log)
    statements, jobs, per_node, per_kind = count_events(event_log)
    shutil.rmtree(event_log)
    return Run(kind, seconds, statements, jobs, slowest_nodes(target), per_node, per_kind)


def sample_records() -> list[dict]:
    """The sample's upserts of the tenants the `tenants` seed lists."""
    tenants = {
        line.split(",")[0]
        for line in (PROJECT_DIR / "seeds" / "tenants.csv").read_text().splitlines()[1:]
    }
    found = []
    for path in sorted((SAMPLE_LANDING / "records").iterdir()):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", errors="replace") as lines:
            for line in lines:
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if (
                    isinstance(message, dict)
                    and message.get("op") == "upsert"
                    and isinstance(message.get("tenant_id"), str)
                    and message["tenant_id"] in tenants
                    and isinstance(message.get("record_id"), str)
                ):
                    found.append(message)
    return found


def new_file(landing: Path, lines: int, seed: int) -> None:
    """One records file: three in four lines update a sample record (a patch of its payload),
    one in five is a new record, the rest delete one; events in the last hour."""
    rng = random.Random(seed)
    known = sample_records()
    now = datetime.now(UTC)
    out = []
    for line in range(lines):
        event_ts = (now - timedelta(seconds=rng.randrange(3600))).isoformat()
        base = dict(rng.choice(known))
        base.update(event_ts=event_ts, seq=10_000_000 + line)
        roll = rng.random()
        if roll < 0.2:
            base.update(record_id=f"floor-{seed}-{line}", primary_id=f"email:floor{line}@x.test")
            base["payload"] = {"created_by": "bench_run_floor", "n": line}
        elif roll < 0.25:
            base.update(op="delete")
            base.pop("payload", None)
        else:
            base["payload"] = {"bench_run_floor": {"line": line, "tier": rng.choice("abc")}}
        out.append(json.dumps(base))
    path = landing / "records" / f"part-floor-{seed:05d}.jsonl"
    path.write_text("\n".join(out) + "\n")


def watch_runs(home: Path, landing: Path, seed: int) -> list[Run]:
    """(c) and (d) in one `profile-lake watch`: its first run (the JVM's start) is left out,
    the second comes by `--every` with nothing new, the third when a new file lands."""
    from profile_lake.watch.progress import parse_progress_line

    watcher = subprocess.Popen(
        [
            str(PROFILE_LAKE),
            "watch",
            "--poll",
            "1s",
            "--min-interval",
            "0",
            "--every",
            f"{WATCH_EVERY_S}s",
            "--max-runs",
            "3",
        ],
        cwd=PROJECT_DIR,
        env=lake_env(home, landing),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    runs: list[Run] = []
    assert watcher.stdout is not None
    for line in watcher.stdout:
        progress = parse_progress_line(line)
        if progress is None:
            continue
        print(f"  {line.strip()}")
        if progress["run"] == 2:
            runs.append(Run("watch: no new", float(progress["seconds"]), 0, 0))
            new_file(landing, NEW_FILE_LINES, seed=seed)
        elif progress["run"] == 3:
            runs.append(Run("watch: one new", float(progress["seconds"]), 0, 0))
    if watcher.wait() != 0 or len(runs) != 2:
        raise SystemExit(f"profile-lake watch ended with {watcher.returncode} after {runs}")
    return runs


def report(runs: list[Run]) -> None:
    print()
    print(f"{'run':<16}{'seconds':>9}{'goal':>7}{'ratio':>7}{'statements':>12}{'jobs':>7}")
    for run in runs:
        goal = GOALS[run.kind]
        counted = run.kind.startswith("watch")  # the watcher's runs share its event log
        statements, jobs = ("-", "-") if counted else (run.statements, run.jobs)
        print(
            f"{run.kind:<16}{run.seconds:>9.1f}{goal:>7.0f}{run.seconds / goal:>7.2f}"
            f"{statements:>12}{jobs:>7}"
        )
    one_file = [run for run in runs if run.kind == "one new file"]
    for run in one_file:
        print(f"one new file: {run.statements} statements, goal {ONE_FILE_STATEMENTS_GOAL}")
    for run in runs:
        if run.slowest:
            nodes = ", ".join(f"{name} {seconds:.1f}s" for name, seconds in run.slowest)
            print(f"  {run.kind}: {nodes}")
    for run in runs:
        if run.per_kind:
            kinds = ", ".join(f"{kind} {n}" for kind, n in run.per_kind.most_common())
            print(f"  {run.kind}, statements by kind: {kinds}")
    for run in runs:
        if run.per_node:
            counts = ", ".join(f"{node} {n}" for node, n in run.per_node.most_common())
            print(f"  {run.kind}, statements per node: {counts}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1, help="runs of (a) and (b) each")
    parser.add_argument("--keep", action="store_true", help="keep the lake under /tmp")
    parser.add_argument("--shell-only", action="store_true", help="leave out the watch runs")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} (1 min)")
    home = Path(tempfile.mkdtemp(prefix="bench-run-floor-"))
    landing = home / "landing"
    shutil.copytree(SAMPLE_LANDING, landing)
    try:
        runs = [build("fresh build", home, landing)]
        for repeat in range(args.repeats):
            runs.append(build("no new files", home, landing))
            new_file(landing, NEW_FILE_LINES, seed=repeat)
            runs.append(build("one new file", home, landing))
        if not args.shell_only:
            runs += watch_runs(home, landing, seed=args.repeats)
        report(runs)
    finally:
        if not args.keep:
            shutil.rmtree(home, ignore_errors=True)
        else:
            print(f"kept: {home}")


if __name__ == "__main__":
    main()
