"""One run's plan: which nodes it skips (profile_lake.run_state), and what it records of the
nodes that succeeded. The adapter holds one planner per dbt invocation."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from profile_lake.delta_log import (
    changed_bytes_since,
    column_minimum,
    commit_id,
    commits_all_tagged,
    latest_commit,
    managed_table_path,
    partition_folder_count,
    partition_values_written_since,
    table_size_bytes,
)
from profile_lake.run_state import (
    NEUTRAL_COMMIT_TAG,
    SKIPPING_COMMANDS,
    NodePlan,
    RunStateStore,
    code_fingerprint,
    due_reason,
    fingerprint,
    plan_node,
    state_to_record,
    tables_read,
)
from profile_lake.techniques import TENANT_COLUMN, TableCost, Technique, choose_technique
from profile_lake.watch.status import parse_iso

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_FOLDERS = ("models", "python_models", "macros", "tests", "seeds", "snapshots")
PROJECT_SUFFIXES = (".sql", ".py", ".yml", ".yaml", ".csv", ".md")
# the packages whose macros (materializations, tests) and engines the nodes run on
DEPENDENCIES = ("dbt-core", "dbt-spark", "dbt-adapters", "pyspark", "delta-spark")
RESOURCE_TYPES = frozenset({"model", "seed", "snapshot", "test", "unit_test"})


# --vars that change how a node computes or lays out its rows, never which rows: every
# technique gives a full refresh's rows (profile_lake.techniques) and a compaction changes no
# row, so setting one neither runs a node again nor keeps a record of its own.
ROWS_NEUTRAL_VARS = ("mart_technique", "compaction_max_small_files")


def node_variables(variables: Mapping[str, Any]) -> dict[str, Any]:
    """The --vars that may change what a node computes: all but ROWS_NEUTRAL_VARS."""
    return {name: value for name, value in variables.items() if name not in ROWS_NEUTRAL_VARS}


@dataclass(frozen=True)
class RunSettings:
    """What a node's fingerprint takes from the invocation: the command, whether it is a full
    refresh, the --vars (node_variables) and the target. Not the PROFILE_LAKE_ environment:
    it says where the lake and the landing folder are and how Spark runs, not what a node
    computes (a setting that did would reach the node's SQL or config, which the fingerprint
    holds). `empty` (dbt's --empty reads no row) and `defer` (refs may read another
    environment's tables) runs run every node and record none."""

    command: str
    full_refresh: bool
    variables: Mapping[str, Any]
    target: str
    empty: bool = False
    defer: bool = False

    @property
    def variant(self) -> str:
        """The record a run reads and writes: one per target and --vars, so runs of other
        tenants do not overwrite each other's."""
        return fingerprint({"target": self.target, "variables": self.variables})[:12]


def dependency_versions() -> dict[str, str]:
    """The versions of the packages whose macros and behaviour the project's nodes run on."""
    return {name: version(name) for name in DEPENDENCIES}


class RunPlanner:
    """Plans each node once per invocation (its compile-time macros and its materialization
    ask the same question) and records the nodes that succeeded at the run's end.
    `warehouse`: the local warehouse folder, None when the tables are not on this machine's
    file system (then every node runs)."""

    def __init__(
        self,
        code_roots: Sequence[Path],
        warehouse: Path | None,
        state_dir: Path,
        settings: RunSettings,
    ) -> None:
        self.warehouse = warehouse
        self.settings = settings
        self.store = RunStateStore(state_dir)
        self.code = fingerprint(
            {
                "files": code_fingerprint(code_roots, PROJECT_SUFFIXES),
                "packages": dependency_versions(),
            }
        )
        self._plans: dict[str, NodePlan] = {}
        self._tables: dict[str, str] = {}
        self._reads: dict[str, tuple[str, ...]] = {}
        self._techniques: dict[str, Technique] = {}
        self._guard = threading.Lock()

    @classmethod
    def for_project(
        cls,
        project_dir: Path,
        adapter_dirs: Sequence[Path],
        warehouse: Path | None,
        schema: str,
        settings: RunSettings,
    ) -> RunPlanner:
        """A planner over the project's code, this package and the adapter's, keeping its
        records beside the warehouse (`run_state/<schema>`)."""
        roots = [
            *(project_dir / folder for folder in PROJECT_FOLDERS),
            project_dir / "dbt_project.yml",
            PACKAGE_DIR,
            *adapter_dirs,
        ]
        state_dir = (warehouse or project_dir).parent / "run_state" / schema
        return cls(roots, warehouse, state_dir, settings)

    def _commit(self, schema: str, table: str) -> str | None:
        if self.warehouse is None:
            return None
        return latest_commit(managed_table_path(self.warehouse, schema, table))

    def plan(
        self,
        node: Mapping[str, Any],
        graph: Mapping[str, Any],
        checks_scope: str,
        exists: bool = True,
    ) -> NodePlan:
        """`checks_scope`: the rows a data test checks (a test that passed on the run's rows
        says nothing of the others); `exists`: whether the node's relation is in the catalog
        (a table whose metastore entry is gone is built again)."""
        unique_id = str(node["unique_id"])
        with self._guard:
            if unique_id not in self._plans:
                self._plans[unique_id] = self._plan(unique_id, node, graph, checks_scope, exists)
            return self._plans[unique_id]

    def _plan(
        self,
        unique_id: str,
        node: Mapping[str, Any],
        graph: Mapping[str, Any],
        checks_scope: str,
        exists: bool,
    ) -> NodePlan:
        nodes, sources = graph.get("nodes") or {}, graph.get("sources") or {}
        resource_type = str(node["resource_type"])
        config = node.get("config") or {}
        materialized = config.get("materialized")
        parts = {
            "code": self.code,
            "node": node.get("checksum"),
            "config": config,
            "settings": self.settings,
            "checks": checks_scope if resource_type == "test" else None,
        }
        versions: dict[str, str | None] = {}
        unknown: tuple[str, ...] = ()
        # a unit test reads its fixtures; a view's definition is all it holds
        if resource_type != "unit_test" and materialized not in ("view", "ephemeral"):
            read = tables_read(unique_id, nodes, sources)
            unknown = read.unknown
            self._reads[unique_id] = tuple(
                f"{schema}.{table}" for schema, table in sorted(read.tables)
            )
            for schema, table in sorted(read.tables):
                versions[f"{schema}.{table}"] = self._commit(schema, table)
        if resource_type not in ("test", "unit_test"):
            own = f"{node['schema']}.{node['alias']}"
            self._tables[unique_id] = own
            versions[own] = self._commit(*own.split(".", 1)) if materialized != "view" else "view"
        always_run = self._always_run(resource_type, config)
        if always_run is None and not exists:
            always_run = "its relation is not in the catalog"
        if always_run is None and unknown:
            always_run = f"it depends on {unknown[0]}, which the graph does not hold"
        if always_run is None and unique_id in self._tables:
            always_run = self._due(config, self._tables[unique_id])
        missing = self._missing_required_table(config) if always_run is None else None
        if missing is not None:
            return NodePlan(
                True, f"skipped: {missing} does not exist, so there is nothing to do", "", {}
            )
        return plan_node(
            self.store.load(unique_id, self.settings.variant),
            fingerprint(parts),
            versions,
            always_run=always_run,
        )

    def _always_run(self, resource_type: str, config: Mapping[str, Any]) -> str | None:
        if self.settings.command not in SKIPPING_COMMANDS:
            return f"dbt {self.settings.command} runs every node"
        if self.warehouse is None:
            return "the warehouse is not a local folder: its tables' logs cannot be listed"
        if self.settings.empty:
            return "an --empty run reads no row"
        if self.settings.defer:
            return "a --defer run may read another environment's tables"
        if resource_type not in RESOURCE_TYPES:
            return f"a {resource_type} always runs"
        if self.settings.full_refresh or config.get("full_refresh"):
            return "a full refresh"
        if (config.get("meta") or {}).get("skip_when_unchanged") is False:
            return "it reads the clock or state outside its inputs (meta skip_when_unchanged)"
        return None

    def _missing_required_table(self, config: Mapping[str, Any]) -> str | None:
        """The table a node needs before it has anything to do (`meta: {runs_only_with_table:
        schema.table}`, as int_erasure_rewrites needs the erased set) when it does not exist
        yet; None when it exists or the node names none. Read from the warehouse's folders."""
        needed = (config.get("meta") or {}).get("runs_only_with_table")
        if not needed or self.warehouse is None:
            return None
        schema, _, table = str(needed).partition(".")
        return None if self._commit(schema, table) is not None else str(needed)

    def _due(self, config: Mapping[str, Any], table: str) -> str | None:
        """A node whose rows fall due with the clock (`meta: {run_when_due: {column: ...,
        clock_var: ...}}`, as profile_segments' next_change_ts) runs when the smallest of that
        column in its table has come: at the run's clock var when given, else now."""
        due = (config.get("meta") or {}).get("run_when_due")
        if not isinstance(due, Mapping) or self.warehouse is None:
            return None
        column = str(due["column"])
        given = self.settings.variables.get(str(due.get("clock_var") or ""))
        moment = parse_iso(str(given)) if given else None
        moment = moment or datetime.now(UTC)
        found = column_minimum(managed_table_path(self.warehouse, *table.split(".", 1)), column)
        minimum = None if found.value is None else parse_iso(found.value)
        # a minimum that is not a moment: the statistics do not say when
        known = found.known and (found.value is None or minimum is not None)
        return due_reason(column, known, minimum, moment)

    def technique(self, unique_id: str, forced: str, tenant_keyed: bool = False) -> Technique:
        """The technique of the mart `unique_id`'s incremental run (profile_lake.techniques),
        chosen once per run from its tables' sizes and what its inputs' commits changed since
        its last success; `tenant_keyed`: whether the mart's key includes the tenant (so that
        it may recompute only the tenants written). Call after plan()."""
        with self._guard:
            if unique_id not in self._techniques:
                self._techniques[unique_id] = self._technique(unique_id, forced, tenant_keyed)
            return self._techniques[unique_id]

    def _touched_tenants(
        self, plan: NodePlan | None, recorded: Mapping[str, str]
    ) -> frozenset[str] | None:
        """The tenants whose rows the commits since the node's last success wrote to the
        tables it reads and writes; None when not known or when it runs for another reason."""
        if plan is None or not plan.inputs_moved or self.warehouse is None:
            return None
        touched: set[str] = set()
        for table, now in plan.versions.items():
            was = recorded.get(table)
            if was == now:
                continue
            since = (was or "").split("@")[0]
            if not since.isdigit():
                return None
            path = managed_table_path(self.warehouse, *table.split(".", 1))
            if commit_id(path, int(since)) != was:  # the table was made anew since
                return None
            written = partition_values_written_since(path, int(since), TENANT_COLUMN)
            if written is None:
                return None
            touched |= written
        return frozenset(touched)

    def _technique(self, unique_id: str, forced: str, tenant_keyed: bool) -> Technique:
        previous = self.store.load(unique_id, self.settings.variant)
        recorded = {} if previous is None else previous.versions

        def cost(table: str) -> TableCost:
            if self.warehouse is None:
                return TableCost(table, None)
            path = managed_table_path(self.warehouse, *table.split(".", 1))
            since = (recorded.get(table) or "").split("@")[0]
            changed = changed_bytes_since(path, int(since)) if since.isdigit() else None
            return TableCost(table, table_size_bytes(path), changed)

        own = self._tables.get(unique_id, unique_id)
        target = cost(own)
        touched = None
        if tenant_keyed:
            touched = self._touched_tenants(self._plans.get(unique_id), recorded)
            if self.warehouse is not None:
                path = managed_table_path(self.warehouse, *own.split(".", 1))
                tenants = partition_folder_count(path, TENANT_COLUMN)
                target = replace(target, tenant_count=tenants)
        return choose_technique(
            forced, target, [cost(t) for t in self._reads.get(unique_id, ())], touched
        )

    def techniques(self) -> dict[str, Technique]:
        """The technique each mart of this run took."""
        return dict(self._techniques)

    def record(self, succeeded: Iterable[str], run_id: str) -> list[str]:
        """Record the nodes of this run that succeeded and were not skipped; returns them.
        An --empty or --defer run records nothing: what it wrote is no node's real state."""
        if self.settings.empty or self.settings.defer:
            return []
        recorded = []
        for unique_id in succeeded:
            plan = self._plans.get(unique_id)
            if plan is None or plan.skip:
                continue
            plan = self._through_neutral_commits(plan)
            own = self._tables.get(unique_id)
            written = {} if own is None else {own: self._written(own, plan)}
            state = state_to_record(plan, written, run_id)
            if state is not None:
                self.store.save(unique_id, self.settings.variant, state)
                recorded.append(unique_id)
        return recorded

    def commit_of(self, table: str) -> str | None:
        """`schema.table`'s latest commit, from its log (no statement)."""
        return self._commit(*table.split(".", 1))

    @staticmethod
    def _version_of(commit: str) -> int:
        return int(commit.split("@", 1)[0])

    def note_own_write(self, unique_id: str, table: str, before: str | None) -> bool:
        """The node `unique_id` itself wrote `table`, which it reads, once, starting from the
        commit `before`: when that is the commit it was planned on and the table's latest
        commit directly follows it, the node is recorded as having read that latest commit,
        so its own write does not run it again next time. A commit of another writer in
        between (the table then moved by more than one version) leaves the plan as it was.
        Returns whether the plan moved."""
        after = self.commit_of(table)
        with self._guard:
            plan = self._plans.get(unique_id)
            if (
                plan is None
                or before is None
                or after is None
                or plan.versions.get(table) != before
                or self._version_of(after) != self._version_of(before) + 1
            ):
                return False
            self._plans[unique_id] = replace(plan, versions={**plan.versions, table: after})
            return True

    def _through_neutral_commits(self, plan: NodePlan) -> NodePlan:
        """`plan` as if it had read each of its tables at their latest commit, where every
        commit since the one it read is neutral (NEUTRAL_COMMIT_TAG: an erasure's rewrite of
        staged lines, which changes nothing a reader planned on the commit before computes),
        so those commits alone do not run the node again."""
        if self.warehouse is None:
            return plan
        moved = {}
        for table, recorded in plan.versions.items():
            if recorded in (None, "view"):
                continue
            schema, name = table.split(".", 1)
            latest = self._commit(schema, name)
            if latest is None or latest == recorded:
                continue
            path = managed_table_path(self.warehouse, schema, name)
            since, through = self._version_of(recorded), self._version_of(latest)
            if since < through and commits_all_tagged(path, since, through, NEUTRAL_COMMIT_TAG):
                moved[table] = latest
        return replace(plan, versions={**plan.versions, **moved}) if moved else plan

    def _written(self, table: str, plan: NodePlan) -> str | None:
        if plan.versions.get(table) == "view":
            return "view"
        return self._commit(*table.split(".", 1))

    def skipped(self) -> dict[str, str]:
        """The nodes this run skipped, with why."""
        return {unique_id: plan.reason for unique_id, plan in self._plans.items() if plan.skip}
