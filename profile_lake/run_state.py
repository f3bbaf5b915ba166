"""What each node of a run consumed, and whether a later run may skip it.

A node (a model, seed, snapshot or data test) that succeeds is recorded with its fingerprint
(the project's code, the node's own definition and the run's settings) and the Delta version of
every table it reads, and of the table it writes. A later run skips the node, running no Spark
statement for it, when its fingerprint is the same and every one of those tables is still at
the recorded version: the node would read exactly what it read last time, so it would write
nothing new (a data test: find nothing new). Anything unknown (a table without a Delta log, a
node never recorded) runs. A run that stops before recording a node runs it again next time,
which repeats work but never skips any: nodes are recorded only after they succeeded.

Pure logic and file I/O only; the versions are read from the Delta log without Spark
(profile_lake.delta_log) and the plan reaches dbt through the adapter.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

# The commands whose nodes may be skipped; `dbt show`, `compile` or `docs` always run them.
SKIPPING_COMMANDS = frozenset({"build", "run", "test", "seed", "snapshot"})
# The userMetadata of commits that change nothing a reader computes (an erasure's rewrite of
# staged lines, profile_lake.spark.erasure_rewrite): a node is not run again for them alone.
NEUTRAL_COMMIT_TAG = "profile_lake:erasure-rewrite"


@dataclass(frozen=True)
class NodeState:
    """A node's last success: its fingerprint and the commits of the tables it read and
    wrote (table name -> profile_lake.delta_log.latest_commit)."""

    fingerprint: str
    versions: Mapping[str, str]
    run_id: str = ""

    def to_json(self) -> str:
        return json.dumps(
            {
                "fingerprint": self.fingerprint,
                "versions": dict(self.versions),
                "run_id": self.run_id,
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> NodeState:
        data = json.loads(text)
        return cls(str(data["fingerprint"]), dict(data["versions"]), str(data.get("run_id", "")))


@dataclass(frozen=True)
class NodePlan:
    """Whether a node runs, and why (the message the run's results show)."""

    skip: bool
    reason: str
    fingerprint: str = ""
    versions: Mapping[str, str | None] = field(default_factory=dict)
    # it runs only because tables it read at its last success moved since (its code, settings
    # and clock as then): what it must recompute follows from what those tables' commits wrote
    inputs_moved: bool = False

    def as_dict(self) -> dict[str, object]:
        return {"skip": self.skip, "reason": self.reason}


def fingerprint(parts: Mapping[str, object]) -> str:
    """A stable digest of everything besides table contents that decides what a node does."""
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def plan_node(
    previous: NodeState | None,
    current_fingerprint: str,
    versions: Mapping[str, str | None],
    always_run: str | None = None,
) -> NodePlan:
    """Skip the node only when its last success had this fingerprint and every table it
    depends on is at the version it was then. `always_run`: a reason to run regardless."""

    def run(reason: str) -> NodePlan:
        return NodePlan(False, reason, current_fingerprint, dict(versions))

    if always_run:
        return run(always_run)
    if previous is None:
        return run("no earlier success recorded")
    if previous.fingerprint != current_fingerprint:
        return run("its code or the run's settings changed")
    for table, version in sorted(versions.items()):
        if version is None:
            return run(f"{table} has no Delta log to compare")
        recorded = previous.versions.get(table)
        if recorded != version:
            was = "unrecorded" if recorded is None else recorded.split("@")[0]
            reason = f"{table} moved from version {was} to {version.split('@')[0]}"
            return NodePlan(
                False,
                reason,
                current_fingerprint,
                dict(versions),
                inputs_moved=recorded is not None,
            )
    since = f" since run {previous.run_id}" if previous.run_id else ""
    return NodePlan(
        True, f"skipped: nothing it reads changed{since}", current_fingerprint, dict(versions)
    )


def due_reason(column: str, known: bool, minimum: datetime | None, moment: datetime) -> str | None:
    """Why a node whose rows fall due with the clock runs though nothing it reads moved (None:
    no row is due at `moment`, and the node may be skipped). `known`: whether the table's
    statistics give `column`'s minimum over its rows; `minimum`: it (None: every row's is
    null, no row will fall due)."""
    if not known:
        return f"its table's statistics do not give the smallest {column}"
    if minimum is not None and minimum <= moment:
        return f"a row's {column} ({minimum.isoformat()}) has come"
    return None


def state_to_record(
    plan: NodePlan, written: Mapping[str, str | None], run_id: str
) -> NodeState | None:
    """What a node's success records: the commits it read when it was planned, and the commit
    its own table has now (`written`); None when one is unknown."""
    versions = {**plan.versions, **written}
    known = {table: version for table, version in versions.items() if version is not None}
    if not plan.fingerprint or len(known) < len(versions):
        return None
    return NodeState(plan.fingerprint, known, run_id)


def code_fingerprint(roots: Iterable[Path], suffixes: Iterable[str]) -> str:
    """A digest of every file under `roots` whose name ends in one of `suffixes`: the project's
    models, macros, tests and seeds and the Python package behind them. Any change to them
    runs every node once."""
    digest = hashlib.sha256()
    endings = tuple(suffixes)
    for root in roots:
        files = [root] if root.is_file() else sorted(root.rglob("*"))
        for path in files:
            if path.is_file() and path.name.endswith(endings) and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(root.parent)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class TablesRead:
    """What a node reads: (schema, table) pairs, and the ids of dependencies the graph does
    not know (a node that reads one cannot be judged, so it runs)."""

    tables: frozenset[tuple[str, str]]
    unknown: tuple[str, ...] = ()


def tables_read(
    node_id: str,
    nodes: Mapping[str, Mapping[str, Any]],
    sources: Mapping[str, Mapping[str, Any]],
) -> TablesRead:
    """The (schema, table) of every table a node reads: its refs and sources, and through a
    view or an ephemeral model, what that one reads."""
    found: set[tuple[str, str]] = set()
    unknown: list[str] = []
    seen: set[str] = set()
    pending = list(_depends_on(nodes[node_id]))
    while pending:
        unique_id = pending.pop()
        if unique_id in seen:
            continue
        seen.add(unique_id)
        if unique_id in sources:
            source = sources[unique_id]
            found.add((source["schema"], source["identifier"]))
            continue
        node = nodes.get(unique_id)
        if node is None:
            unknown.append(unique_id)
            continue
        if node["config"].get("materialized") in ("view", "ephemeral"):
            pending.extend(_depends_on(node))
        else:
            found.add((node["schema"], node.get("alias") or node["name"]))
    return TablesRead(frozenset(found), tuple(sorted(unknown)))


def _depends_on(node: Mapping[str, Any]) -> list[str]:
    """The nodes a node reads (a seed reads none)."""
    return list((node.get("depends_on") or {}).get("nodes") or [])


# file names stay well under the 255 bytes most file systems allow
MAX_NAME = 120


class RunStateStore:
    """One JSON file per node under `root`: nodes of one run finish in different threads, and
    runs of other tenants in other processes record their nodes side by side."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, node_id: str, variant: str) -> Path:
        """The node's id as a file name (a long one, a test's, cut, with a digest of it), then
        the variant: runs of other tenants keep records of their own."""
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", node_id)
        if len(name) > MAX_NAME:
            name = name[:MAX_NAME] + "-" + hashlib.sha256(node_id.encode()).hexdigest()[:16]
        return self.root / f"{name}.{variant}.json"

    def load(self, node_id: str, variant: str) -> NodeState | None:
        try:
            return NodeState.from_json(self._path(node_id, variant).read_text())
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def save(self, node_id: str, variant: str, state: NodeState) -> None:
        """Written whole or not at all (a rename), so a killed run leaves the old state."""
        self.root.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.root, prefix=".", suffix=".tmp")
        with os.fdopen(handle, "w") as out:
            out.write(state.to_json())
        os.replace(temporary, self._path(node_id, variant))
