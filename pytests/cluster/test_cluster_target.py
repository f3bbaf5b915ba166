"""The `cluster` target on a real Spark standalone cluster: one master and one worker, started
from the installed pyspark distribution, and `dbt build --target cluster` in a subprocess.

The subprocess matters: this pytest process may already own a local SparkContext (one per
process), and the cluster run needs a driver of its own. It also gets a lake of its own
(PROFILE_LAKE_HOME in a tmp dir): embedded Derby allows one process per metastore. The tables
it writes are read back with the independent `deltalake` package, not with Spark.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyspark
import pytest

from profile_lake.delta_reader import read_delta
from pytests.support.dbt_runner import PROFILES_DIR, PROJECT_DIR

pytestmark = [pytest.mark.cluster, pytest.mark.integration]

SPARK_HOME = Path(pyspark.__file__).parent
SPARK_CLASS = SPARK_HOME / "bin" / "spark-class"
HOST = "127.0.0.1"
WORKER_CORES = 2
WORKER_MEMORY = "2g"
STARTUP_TIMEOUT_S = 120
DBT_TIMEOUT_S = 600
LANDING_RECORDS = PROJECT_DIR / "sample" / "landing" / "records"
TENANTS_SEED_ROWS = 8
# Always built: the seed and the records staging model (with their data tests). A Python model
# is added, with its parents, when python_models/ has one (the project is still growing).
STABLE_SELECTION = ["tenants", "stg_records__changes"]
# Inherited variables that would point the dbt subprocess at another lake, project or target,
# or (when pytest itself runs under a pyspark launcher) at an existing JVM gateway.
PARENT_ONLY_ENV = (
    "PYSPARK_GATEWAY_PORT",
    "PYSPARK_GATEWAY_SECRET",
    "PROFILE_LAKE_HOME",
    "PROFILE_LAKE_LANDING",
    "PROFILE_LAKE_TARGET",
    "DBT_PROFILES_DIR",
    "DBT_PROJECT_DIR",
    "DBT_TARGET_PATH",
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def fetch_json(url: str) -> dict[str, Any] | None:
    """The JSON at `url`, or None while it does not answer with JSON: a master's web UI that
    is still starting serves its HTML page (or nothing) at /json for a moment."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return json.load(response)
    except (OSError, ValueError):
        return None


@dataclass
class StandaloneCluster:
    master_url: str
    ui_url: str
    work_dir: Path
    log_dir: Path
    processes: list[subprocess.Popen[bytes]]
    started_at: float

    def state(self) -> dict[str, Any]:
        state = fetch_json(f"{self.ui_url}/json")
        assert state is not None, f"master web UI at {self.ui_url} does not answer"
        return state

    def logs(self) -> str:
        return "\n".join(
            f"--- {path.name}\n" + path.read_text(errors="replace")[-3000:]
            for path in sorted(self.log_dir.glob("*.log"))
        )

    def start(self, role: str, *args: str) -> None:
        log = (self.log_dir / f"{role}.log").open("wb")
        env = {
            **os.environ,
            "SPARK_HOME": str(SPARK_HOME),
            "SPARK_LOCAL_IP": HOST,
            "SPARK_LOG_DIR": str(self.log_dir),
            "SPARK_WORKER_DIR": str(self.work_dir),
            "PYSPARK_PYTHON": sys.executable,
        }
        # A session of its own, so that stopping it also stops the executors the worker forks.
        self.processes.append(
            subprocess.Popen(
                [str(SPARK_CLASS), *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        )

    def wait_for(self, what: str, ready: Any) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            for process in self.processes:
                if process.poll() is not None:
                    pytest.fail(f"{process.args[1]} exited ({process.returncode})\n{self.logs()}")
            state = fetch_json(f"{self.ui_url}/json")
            if state is not None and ready(state):
                return
            time.sleep(1)
        pytest.fail(f"{what} not ready after {STARTUP_TIMEOUT_S}s\n{self.logs()}")

    def stop(self) -> None:
        for process in reversed(self.processes):  # worker (and its executors), then master
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()


@pytest.fixture(scope="module")
def standalone_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    assert SPARK_CLASS.exists(), f"no spark-class in the pyspark distribution ({SPARK_HOME})"
    root = tmp_path_factory.mktemp("spark-standalone")
    master_port, master_ui_port, worker_ui_port = free_port(), free_port(), free_port()
    cluster = StandaloneCluster(
        master_url=f"spark://{HOST}:{master_port}",
        ui_url=f"http://{HOST}:{master_ui_port}",
        work_dir=root / "work",
        log_dir=root / "logs",
        processes=[],
        started_at=time.monotonic(),
    )
    cluster.work_dir.mkdir()
    cluster.log_dir.mkdir()
    try:
        cluster.start(
            "master",
            "org.apache.spark.deploy.master.Master",
            *("--host", HOST, "--port", str(master_port), "--webui-port", str(master_ui_port)),
        )
        cluster.wait_for("master", lambda state: state.get("status") == "ALIVE")
        cluster.start(
            "worker",
            "org.apache.spark.deploy.worker.Worker",
            *("--host", HOST, "--cores", str(WORKER_CORES), "--memory", WORKER_MEMORY),
            *("--work-dir", str(cluster.work_dir), "--webui-port", str(worker_ui_port)),
            cluster.master_url,
        )
        cluster.wait_for(
            "worker registration",
            lambda state: any(worker["state"] == "ALIVE" for worker in state.get("workers", [])),
        )
        yield cluster
    finally:
        cluster.stop()


def python_model_selection() -> list[str]:
    """The records fold (a Python model whose work is Arrow batches on the executors), with its
    parents: on the sample it holds rows."""
    assert (
        PROJECT_DIR / "python_models" / "intermediate" / "records" / "int_record_states.py"
    ).exists()
    return ["+int_record_states"]


def landed_line_numbers(folder: Path) -> set[tuple[str, int]]:
    """(file relative to the landing folder, 1-based line number) of every line landed in the
    folder, counted here from the bytes: a line ends at a newline, a final newline ends the
    last line rather than starting an empty one."""
    lines: set[tuple[str, int]] = set()
    for path in sorted(folder.iterdir()):
        if not path.name.endswith((".jsonl", ".jsonl.gz")):
            continue
        data = path.read_bytes()
        if path.name.endswith(".gz"):
            data = gzip.decompress(data)
        count = data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
        relative = f"{folder.name}/{path.name}"
        lines.update((relative, number) for number in range(1, count + 1))
    return lines


def read_table(warehouse: Path, name: str, columns: list[str] | None = None) -> pa.Table:
    """The Delta table called `name`, wherever the project's schema naming put it, as read by
    the independent deltalake reader."""
    found = [path.parent for path in warehouse.glob(f"*/{name}/_delta_log")]
    assert len(found) == 1, f"expected one Delta table {name} under {warehouse}, found {found}"
    return read_delta(found[0], columns)


def test_dbt_build_on_standalone_cluster(
    standalone_cluster: StandaloneCluster, tmp_path: Path
) -> None:
    started = time.monotonic()
    lake = tmp_path / "lake"
    selection = STABLE_SELECTION + python_model_selection()
    env = {key: value for key, value in os.environ.items() if key not in PARENT_ONLY_ENV}
    env.update(
        PROFILE_LAKE_HOME=str(lake),
        PROFILE_LAKE_SCHEMA="cluster_test",
        PROFILE_LAKE_SPARK_MASTER=standalone_cluster.master_url,
        DBT_PROFILES_DIR=str(PROFILES_DIR),
        SPARK_LOCAL_IP=HOST,
        PYSPARK_PYTHON=sys.executable,
    )
    command = [
        str(Path(sys.executable).with_name("dbt")),
        "build",
        *("--target", "cluster"),
        *("--project-dir", str(PROJECT_DIR)),
        *("--target-path", str(tmp_path / "target")),
        *("--log-path", str(tmp_path / "logs")),
        *("--select", *selection),
        # Only the tests of what is built (eager selection would add tests of other models)
        *("--indirect-selection", "cautious"),
    ]
    dbt_log = tmp_path / "dbt-build.log"
    with dbt_log.open("wb") as output:
        # cwd: the default landing path (sample/landing) is relative to the project.
        dbt = subprocess.Popen(
            command,
            cwd=PROJECT_DIR,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            returncode = dbt.wait(timeout=DBT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(dbt.pid, signal.SIGKILL)
            dbt.wait()
            pytest.fail(f"dbt build took over {DBT_TIMEOUT_S}s\n{dbt_log.read_text()[-5000:]}")
    dbt_seconds = time.monotonic() - started
    assert returncode == 0, (
        f"dbt build --target cluster --select {' '.join(selection)} failed ({returncode})\n"
        f"{dbt_log.read_text(errors='replace')[-8000:]}\n{standalone_cluster.logs()}"
    )

    # The run used the cluster: an application of the profile's name ran on the master, and
    # its executor ran in the worker's work dir.
    state = standalone_cluster.state()
    applications = state.get("activeapps", []) + state.get("completedapps", [])
    assert "profile_lake" in {app["name"] for app in applications}, applications
    assert list(standalone_cluster.work_dir.glob("app-*/*")), "no executor ran on the worker"

    warehouse = lake / "warehouse"
    assert read_table(warehouse, "tenants").num_rows == TENANTS_SEED_ROWS

    # Every landed line of records/ is staged exactly once, either accepted or quarantined.
    landed = landed_line_numbers(LANDING_RECORDS)
    changes = read_table(
        warehouse, "stg_records__changes", ["source_file", "line_number", "is_accepted"]
    )
    staged = list(
        zip(
            changes.column("source_file").to_pylist(),
            changes.column("line_number").to_pylist(),
            strict=True,
        )
    )
    assert len(staged) == len(set(staged)), "a landed line was staged more than once"
    assert set(staged) == landed
    accepted = pc.sum(pc.cast(changes.column("is_accepted"), "int64")).as_py() or 0
    quarantined = pc.sum(pc.cast(pc.invert(changes.column("is_accepted")), "int64")).as_py() or 0
    assert changes.column("is_accepted").null_count == 0
    assert accepted + quarantined == len(landed)
    assert 0 < quarantined < len(landed)  # the sample has bad lines, and mostly good ones

    for selector in selection[len(STABLE_SELECTION) :]:
        assert read_table(warehouse, selector.lstrip("+")).num_rows > 0

    print(
        f"\ncluster test: dbt build ({' '.join(selection)}) on {standalone_cluster.master_url} "
        f"in {dbt_seconds:.0f}s; with the cluster's start "
        f"{time.monotonic() - standalone_cluster.started_at:.0f}s. {len(landed)} records lines: "
        f"{accepted} accepted, {quarantined} quarantined"
    )
