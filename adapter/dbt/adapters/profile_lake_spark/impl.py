"""The adapter: dbt-spark's, with Python models submitted to the running session by default."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.context import SpawnContext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbt.adapters.__about__ import version as base_adapter_version
from dbt.adapters.base import PythonJobHelper, available
from dbt.adapters.base.impl import ConstraintSupport
from dbt.adapters.base.relation import AdapterTrackingRelationInfo
from dbt.adapters.contracts.relation import RelationConfig
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.profile_lake_spark.__version__ import version as adapter_version
from dbt.adapters.profile_lake_spark.connections import (
    ADAPTER_TYPE,
    ProfileLakeSparkConnectionManager,
)
from dbt.adapters.profile_lake_spark.python_submissions import SessionPythonJobHelper
from dbt.adapters.spark.column import SparkColumn
from dbt.adapters.spark.impl import SparkAdapter
from dbt_common.contracts.constraints import ConstraintType
from dbt_common.exceptions import DbtRuntimeError

if TYPE_CHECKING:
    from profile_lake.checks import RunRows
    from profile_lake.locks.delta import HeldLocks
    from profile_lake.run_planner import RunPlanner

logger = AdapterLogger("ProfileLake")
# The adapter's code (Python, and the macros it ships) is part of what a node runs.
ADAPTER_CODE_DIRS = (
    Path(__file__).resolve().parent,
    Path(__file__).resolve().parents[2] / "include" / "profile_lake_spark",
)


@contextmanager
def lock_errors_as_runtime_errors() -> Iterator[None]:
    """A lock held by another run stops this one as a dbt Runtime Error: raised from a hook's
    macro, any other exception is reported as a "Compilation Error" of the hook."""
    from profile_lake.locks.delta import LockNotAcquiredError

    try:
        yield
    except LockNotAcquiredError as error:
        raise DbtRuntimeError(str(error)) from None


def _agate_rows(table: Any) -> list[dict[str, Any]]:
    """The rows of an agate table (what run_query returns to a macro) as dicts."""
    return [dict(zip(table.column_names, row, strict=True)) for row in table.rows]


def _utc(moment: Any) -> Any:
    """dbt's node timings are naive UTC datetimes."""
    from datetime import UTC

    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


def skipped_reason(result: Any) -> str | None:
    """Why the run skipped a node (skipped_node_result's response), None when it ran it: a
    data test's result carries no message of its own when it passes."""
    response = getattr(result, "adapter_response", None) or {}
    return response.get("_message") if response.get("code") == "SKIP" else None


def with_technique(message: str | None, technique: str | None) -> str | None:
    """A node's message, with the technique its run took where it took one."""
    if technique is None:
        return message
    return f"{message}; technique {technique}" if message else f"technique {technique}"


def node_result(result: Any, technique: str | None = None) -> Any:
    """One of on-run-end's `results` (a RunResult, or a source's freshness result) as the run
    history's NodeResult; `technique`: how a mart's run brought it up to date, with why."""
    from profile_lake.run_history import NodeResult

    node = result.node
    execute = [timing for timing in result.timing or [] if timing.name == "execute"]
    status = getattr(result.status, "value", result.status)
    return NodeResult(
        unique_id=node.unique_id,
        name=node.name,
        resource_type=str(getattr(node.resource_type, "value", node.resource_type)),
        status=str(status),
        seconds=float(result.execution_time or 0.0),
        started_at=_utc(execute[0].started_at) if execute else None,
        completed_at=_utc(execute[0].completed_at) if execute else None,
        failures=getattr(result, "failures", None),
        message=skipped_reason(result)
        or with_technique(getattr(result, "message", None), technique),
        schema=getattr(node, "schema", None),
        identifier=getattr(node, "alias", None) or getattr(node, "identifier", None),
    )


class ProfileLakeSparkAdapter(SparkAdapter):
    ConnectionManager = ProfileLakeSparkConnectionManager
    # Delta checks NOT NULL and CHECK constraints on every write: the contract's constraints
    # are written as its table properties (profile_lake.contract_constraints).
    CONSTRAINT_SUPPORT = {  # noqa: RUF012 (dbt-spark's own class attribute, extended)
        **SparkAdapter.CONSTRAINT_SUPPORT,
        ConstraintType.check: ConstraintSupport.ENFORCED,
        ConstraintType.not_null: ConstraintSupport.ENFORCED,
    }

    def __init__(self, config: Any, mp_context: SpawnContext) -> None:
        super().__init__(config, mp_context)
        # dbt runs nodes in threads: a run's first whole-lake steps may start side by side
        self._whole_lake_guard = threading.Lock()
        # rows_this_run_where: one look-up per table and run, shared by its tests
        self._rows_this_run: dict[tuple, RunRows] = {}
        # tests of one table run in dbt's threads side by side: one of them registers its view
        self._rows_this_run_guard = threading.Lock()
        # source_changes: what each mart read of its sources this run, recorded by its post-hook
        self._feed_reads: dict[str, dict[str, Any]] = {}
        self._stamps: dict[str, dict[str, str]] = {}
        # _stamps_before: each mart's stamps as the run found them, per invocation
        self._stamps_read: dict[tuple[str, str], dict[str, str]] = {}
        # merge_rows: the keys of each mart's run rows, read by its MERGE (mart_keys)
        self._merge_keys: dict[str, dict] = {}
        # node_plan: one planner per invocation, shared by dbt's threads
        self._planner: tuple[str, RunPlanner] | None = None
        self._planner_guard = threading.Lock()

    @property
    def default_python_submission_method(self) -> str:
        return "session"

    @property
    def python_submission_helpers(self) -> dict[str, type[PythonJobHelper]]:
        return {**super().python_submission_helpers, "session": SessionPythonJobHelper}

    @classmethod
    def get_adapter_run_info(cls, config: RelationConfig) -> AdapterTrackingRelationInfo:
        # dbt guesses the module from the class name ("profilelakespark"); name it outright.
        return AdapterTrackingRelationInfo(
            adapter_name=ADAPTER_TYPE,
            base_adapter_version=base_adapter_version,
            adapter_version=adapter_version,
            model_adapter_details=cls._get_adapter_specific_run_info(config),
        )

    @available
    def ingest_landing(
        self,
        landing_path: str,
        schema: str,
        checkpoint_dir: str,
        tenant_id_pattern: str,
        max_files_per_batch: int,
        full_refresh: bool = False,
        lock_table: str | None = None,
        run_id: str = "",
        lock_wait_seconds: float = 3600,
        lock_lease_seconds: float = 600,
        control_schema: str | None = None,
    ) -> list[str]:
        """Stage new landing files exactly once (see profile_lake.ingest.staging). With a
        lock table, one process at a time ingests (the `ingest` lock, never a tenant's). With
        a control schema, every tenant of a staged erasure request gets its salt
        (profile_lake.spark.erasure) before the request is appended, under the same lock."""
        from contextlib import nullcontext

        from profile_lake.ingest.staging import (
            IngestSettings,
            ingest_landing,
            reset,
        )
        from profile_lake.locks.delta import LockRequest, holding
        from profile_lake.locks.rules import INGEST_KEY

        spark = self._spark_session()
        settings = IngestSettings(
            landing_path,
            schema,
            checkpoint_dir,
            tenant_id_pattern,
            int(max_files_per_batch),
            control_schema,
        )
        lock = (
            holding(
                spark,
                LockRequest(
                    lock_table,
                    (INGEST_KEY,),
                    run_id,
                    "landing ingest",
                    float(lock_wait_seconds),
                    float(lock_lease_seconds),
                ),
                progress=logger.info,
            )
            if lock_table
            else nullcontext()
        )
        with lock_errors_as_runtime_errors(), lock:
            if full_refresh:
                logger.info(f"ingest: full refresh, dropping staging tables in {schema}")
                reset(spark, settings)
            reports = ingest_landing(spark, settings, progress=logger.info)
        # the run history's ended event counts what these batches staged
        self._ingest_batches = [(report.batch_id, report.files) for report in reports]
        return [report.describe() for report in reports]

    @available
    def erasure_hash_sql(self, value_sql: str, kind: str, salt_sql: str) -> str:
        """The SQL expression of the salted erasure hash (profile_lake.erasure.hashing): the
        rule is written once, in Python."""
        from profile_lake.erasure.hashing import erasure_hash_sql

        return erasure_hash_sql(value_sql, kind, salt_sql)  # type: ignore[arg-type]

    @available
    def erasure_purge_due(self, schema: str, lake_home: str, horizon_hours: float) -> bool:
        """Whether a purge should start now (profile_lake.erasure.due): read without Spark, so
        a run's end pays nothing for it when no request waits."""
        from datetime import UTC, datetime
        from pathlib import Path

        from profile_lake.erasure.due import purge_due, read_purge_state

        state = read_purge_state(Path(lake_home), schema)
        return purge_due(state, float(horizon_hours), datetime.now(UTC))

    @available
    def erasure_filter_sql(self, rule: str, *columns: str, sets: str = "erased_sets") -> str:
        """A rule of profile_lake.erasure.filtering as SQL, for the models that read staged
        lines through the erased set joined as `sets`: `sets` (erased_set table, salts
        table), `no_sets` (no request ever applied), `line_erased` (record_id, primary_id),
        `identity_erased` (identities), `related_ids_kept` (related_ids). Written once, in
        Python, for Spark SQL and the Python models."""
        from profile_lake.erasure import filtering

        rules = {
            "sets": filtering.erased_sets_sql,
            "no_sets": filtering.no_erased_sets_sql,
            "line_erased": filtering.line_erased_sql,
            "identity_erased": filtering.identity_erased_sql,
            "related_ids_kept": filtering.related_ids_kept_sql,
        }
        if rule not in rules:
            raise ValueError(f"erasure_filter_sql: no rule {rule!r}; one of {sorted(rules)}")
        if rule == "sets":
            return filtering.erased_sets_sql(*columns)
        if rule == "no_sets":
            return filtering.no_erased_sets_sql()
        return rules[rule](*columns, sets=sets)  # type: ignore[operator]

    @available
    def clear_staged_request_lines(
        self, landing_table: str, staged_table: str, unique_id: str
    ) -> str:
        """Clear the text of the `erasures` landing lines that stg_erasures__requests (the node
        `unique_id`) has staged (profile_lake.spark.erasure); returns what it did, '' when
        nothing was left. The node reads the landing table it clears: its own write is noted
        in its plan, so the next run does not run it again for it."""
        from profile_lake.spark.erasure import clear_staged_request_lines

        planner = self._run_planner()
        before = planner.commit_of(landing_table)
        cleared = clear_staged_request_lines(self._spark_session(), landing_table, staged_table)
        if cleared:
            planner.note_own_write(unique_id, landing_table, before)
        return f"erasure: cleared the text of {cleared} staged request lines" if cleared else ""

    @available
    def purge_history(
        self,
        schema: str,
        lake_home: str,
        lock_table: str | None,
        run_id: str,
        lock_wait_seconds: float,
        lock_lease_seconds: float,
        first_statements: list[str] | None = None,
    ) -> list[str]:
        """Purge every Delta table of the lake of `schema` (profile_lake.spark.purge), holding
        the locks of every tenant, the ingest and the whole lake, after running
        `first_statements` under them; returns what it did."""
        from contextlib import nullcontext
        from pathlib import Path

        from profile_lake.locks.delta import LockRequest, holding
        from profile_lake.locks.rules import EVERY_TENANT_KEY, INGEST_KEY, WHOLE_LAKE_KEY
        from profile_lake.spark.purge import purge_lake

        spark = self._spark_session()
        keys = (WHOLE_LAKE_KEY, EVERY_TENANT_KEY, INGEST_KEY)
        request = LockRequest(
            lock_table or "",
            keys,
            run_id,
            "purge",
            float(lock_wait_seconds),
            float(lock_lease_seconds),
        )
        lock = holding(spark, request, progress=logger.info) if lock_table else nullcontext()
        said: list[str] = []
        with lock_errors_as_runtime_errors(), lock:
            for statement in first_statements or []:
                spark.sql(statement)
            purge_lake(spark, schema, Path(lake_home), progress=said.append, detail=logger.debug)
        return said

    @available
    def run_tenant_scope(
        self, tenants: object, tenant_id_pattern: str, full_refresh: bool
    ) -> list[str] | None:
        """The tenants this run processes (var `tenants`; None: every tenant), checked
        (profile_lake.tenant_scope): a malformed value, or a full refresh limited to some
        tenants, stops the run saying what to change."""
        from profile_lake.tenant_scope import TenantScopeError, run_tenant_scope

        try:
            scope = run_tenant_scope(tenants, tenant_id_pattern, bool(full_refresh))
        except TenantScopeError as error:
            raise DbtRuntimeError(str(error)) from None
        return None if scope is None else list(scope)

    @available
    def check_identity_rules(self, path: str) -> str:
        """The first problem of the identity_rules seed's CSV at `path` ("" when every row is
        fine): profile_lake.identity.rules, the code the graph model reads the seed with."""
        from pathlib import Path

        from profile_lake.identity.rules import IdentityRulesError, read_rules_csv

        try:
            read_rules_csv(Path(path))
        except IdentityRulesError as error:
            return str(error)
        return ""

    @available
    def sql_analysis(self, sql: str) -> dict:
        """Parse and analyse a query without running it: its error, or its column types.

        Returns {"error": message or None, "columns": [[name, type], ...]}; lets macros check
        user-written SQL (segment expressions) and report which one is broken instead of
        failing the run with a Spark stack trace.
        """
        spark = self._spark_session()
        try:
            schema = spark.sql(sql).schema  # analysed eagerly, not executed
        except Exception as error:  # parse and analysis errors alike
            return {"error": str(error).strip().splitlines()[0], "columns": []}
        return {
            "error": None,
            "columns": [[field.name, field.dataType.simpleString()] for field in schema.fields],
        }

    @available
    def acquire_tenant_locks(
        self,
        table: str,
        tenants: list[str] | None,
        run_id: str,
        command: str,
        wait_seconds: float,
        lease_seconds: float,
    ) -> list[str]:
        """Hold the locks of the run's tenants (None: every tenant) until
        release_run_locks, waiting for other runs up to `wait_seconds`; past that, an
        error names the tenant and the run holding it (profile_lake.locks). Already held by
        this run (a full refresh takes them before its ingest): kept as they are."""
        from profile_lake.locks.rules import tenant_keys

        if getattr(self, "_held_tenant_locks", None) is not None:
            return list(self._held_tenant_locks.request.keys)
        self._held_tenant_locks = self._hold(
            table, tenant_keys(tenants), run_id, command, wait_seconds, lease_seconds
        )
        return list(self._held_tenant_locks.request.keys)

    def _refresh_relations_cache(self) -> None:
        """List the cached schemas again: dbt filled its relation cache before the lock was
        taken, and a run that waited must see the tables the holder created meanwhile (an
        incremental model thought missing would be rebuilt from scratch)."""
        schemas = sorted(self.cache.schemas, key=lambda schema: tuple(map(str, schema)))
        self.cache.clear()
        # a listing also returns the session's temporary views (cached_query's), in no schema
        for database, schema in (pair for pair in schemas if pair[1]):
            self.cache.update_schemas([(database, schema)])
            listed = self.Relation.create(database=database, schema=schema).without_identifier()
            for relation in self.list_relations_without_caching(listed):
                if relation.schema:
                    self.cache.add(relation)

    @available
    def acquire_whole_lake_lock(
        self,
        table: str,
        run_id: str,
        command: str,
        wait_seconds: float,
        lease_seconds: float,
    ) -> None:
        """Hold the whole-lake lock until release_run_locks: a step rebuilding tables of every
        tenant waits for another run's such steps to end (up to `wait_seconds`, then an error
        naming the holder). Taken at the run's first such step, then kept."""
        from profile_lake.locks.rules import WHOLE_LAKE_KEY

        with self._whole_lake_guard:
            if getattr(self, "_held_whole_lake_lock", None) is None:
                self._held_whole_lake_lock = self._hold(
                    table, [WHOLE_LAKE_KEY], run_id, command, wait_seconds, lease_seconds
                )

    def _hold(
        self,
        table: str,
        keys: list[str],
        run_id: str,
        command: str,
        wait_seconds: float,
        lease_seconds: float,
    ) -> HeldLocks:
        """Acquire `keys` for this run (profile_lake.locks), then refresh the relation cache."""
        from profile_lake.locks.delta import LockRequest, acquire

        request = LockRequest(
            table, tuple(keys), run_id, command, float(wait_seconds), float(lease_seconds)
        )
        with lock_errors_as_runtime_errors():
            held = acquire(self._spark_session(), request, progress=logger.info)
        self._refresh_relations_cache()
        return held

    @available
    def release_run_locks(self) -> list[str]:
        """Release what acquire_tenant_locks and acquire_whole_lake_lock took in this process
        (nothing held: nothing)."""
        from profile_lake.locks.delta import release

        released: list[str] = []
        for attribute in ("_held_whole_lake_lock", "_held_tenant_locks"):
            held = getattr(self, attribute, None)
            if held is None:
                continue
            setattr(self, attribute, None)
            release(self._spark_session(), held)
            released += held.request.keys
        return released

    @available
    def record_run_start(
        self,
        control_schema: str,
        run_id: str,
        command: str,
        target_name: str,
        tenants: str,
        stale_hours: float,
    ) -> None:
        """Append this run's `started` event to the run history, and a `killed` event for each
        earlier run found dead (profile_lake.spark.run_history)."""
        from datetime import timedelta

        from profile_lake.spark.run_history import RunStart, record_start

        self._ingest_batches: list[tuple[int, int]] = []  # this run's, not an earlier one's
        start = RunStart(
            control_schema, run_id, command, target_name, tenants, timedelta(hours=stale_hours)
        )
        self._run_started = record_start(self._spark_session(), start, logger.info)

    @available
    def run_event_rank_sql(self, column: str) -> str:
        """Which of a run's events tells its state, as a SQL expression over the event
        `column` (higher wins): profile_lake.run_history's rule, the one the report reads."""
        from profile_lake.run_history import event_rank_sql

        return event_rank_sql(column)

    @available
    def record_run_end(self, control_schema: str, schema: str, results: list[Any]) -> None:
        """Append this run's `ended` event and one row per node of dbt's `results` (nothing
        when record_run_start did not run in this process)."""
        from profile_lake.spark.run_history import record_end

        started = getattr(self, "_run_started", None)
        if started is None:
            return
        self._run_started = None
        planner = self._planner[1] if self._planner is not None else None
        techniques = {} if planner is None else planner.techniques()
        nodes = [
            node_result(result, self._technique_said(techniques, result))
            for result in results or []
        ]
        ended = record_end(
            self._spark_session(),
            started,
            control_schema,
            schema,
            nodes,
            getattr(self, "_ingest_batches", []),
        )
        logger.info(
            f"run history: run {ended['run_id']} {ended['status']} in {ended['seconds']:.0f}s, "
            f"{ended['nodes_run']} nodes, {ended['files_ingested']} files ingested"
        )

    @staticmethod
    def _technique_said(techniques: dict[str, Any], result: Any) -> str | None:
        technique = techniques.get(getattr(result.node, "unique_id", ""))
        return None if technique is None or skipped_reason(result) else technique.describe()

    @available
    def rows_this_run_where(
        self,
        relation: str,
        where: str,
        key_columns: list[str] | None,
        run_started_at: str,
        command: str,
        full_refresh: bool,
        full_checks: object,
    ) -> str | None:
        """What a data test of `relation` checks when its `where` config holds rows_this_run()
        or changes_this_run(): the filtered subquery to test (the key-widened one for a
        uniqueness test, whose `key_columns` are given), or None when `where` calls neither
        (profile_lake.checks)."""
        from profile_lake.checks import (
            CHECK_ALL,
            ChecksScopeError,
            checks_only_written_rows,
            find_marker,
            key_scope_sql,
            parse_timestamp,
            scoped_sql,
            whole_table_rows,
        )
        from profile_lake.spark.checks import rows_written

        try:
            marker = find_marker(where)
        except ChecksScopeError as error:
            raise DbtRuntimeError(str(error)) from None
        if marker is None:
            return None
        if not checks_only_written_rows(command, bool(full_refresh), full_checks):
            run_rows = whole_table_rows(relation, CHECK_ALL)
        else:
            key = (relation, marker, run_started_at)
            with self._rows_this_run_guard:
                if key not in self._rows_this_run:
                    self._rows_this_run[key] = rows_written(
                        self._spark_session(), relation, marker, parse_timestamp(run_started_at)
                    )
                    if self._rows_this_run[key].fallback_reason:
                        reason = self._rows_this_run[key].fallback_reason
                        logger.info(f"checks: {relation}: every row checked: {reason}")
                run_rows = self._rows_this_run[key]
        if key_columns:
            return key_scope_sql(relation, where, run_rows, key_columns)
        return scoped_sql(where, run_rows)

    @available
    def node_technique(
        self, node: dict[str, Any], graph: dict[str, Any], forced: object
    ) -> dict[str, str]:
        """How this run brings the incremental mart `node` up to date (profile_lake.techniques):
        `keys`, `tenants` (with the tenants) or `whole`, with why; chosen once per run from
        its tables' sizes and the tenants written in the Delta logs, or forced by var
        mart_technique. A model outside the mart idiom (its post-hook
        does not record the versions it consumed) always takes `keys`, its own way."""
        from profile_lake.techniques import (
            KEYS,
            MART_HOOK,
            TENANT_COLUMN,
            Technique,
            TechniqueError,
            forced_technique,
        )

        try:
            wanted = forced_technique(forced)
        except TechniqueError as error:
            raise DbtRuntimeError(str(error)) from None
        hooks = (node.get("config") or {}).get("post-hook") or []
        sqls = [hook.get("sql", "") if isinstance(hook, dict) else str(hook) for hook in hooks]
        if node.get("language") != "sql" or not any(MART_HOOK in sql for sql in sqls):
            return Technique(KEYS, "not a mart kept from its sources' changes").as_dict()
        self.node_plan(node, graph)  # the plan finds the tables the node reads
        planner = self._run_planner()
        decided = str(node["unique_id"]) in planner.techniques()
        unique_key = (node.get("config") or {}).get("unique_key") or []
        keys = [unique_key] if isinstance(unique_key, str) else list(unique_key)
        technique = planner.technique(str(node["unique_id"]), wanted, TENANT_COLUMN in keys)
        if not decided:
            logger.debug(f"{node['name']}: technique {technique.describe()}")
        return technique.as_dict()

    @available
    def source_changes(self, target: str, source: str, incremental: bool) -> dict:
        """What the mart `target` reads of `source`'s change feed this run (profile_lake.
        mart_feeds): kind none, since (versions start to end) or all."""
        from profile_lake.mart_feeds import changes_view_name
        from profile_lake.spark.mart_feeds import plan_source_read, register_changes_view

        spark = self._spark_session()
        # a full build has no stamps to read (its table may not exist yet)
        stamps = self._stamps_before(target) if incremental else {}
        read = plan_source_read(spark, target, source, bool(incremental), stamps)
        self._feed_reads.setdefault(target, {})[source] = read
        if read.kind != "since":
            return read.as_dict()
        view = changes_view_name(target, source)
        register_changes_view(spark, source, read, view)
        return read.as_dict(view)

    @available
    def recompute_keys(
        self,
        target: str,
        name: str,
        sql: str,
        columns: list[str],
        incremental: bool,
        evaluate: bool,
        limit: int | None,
    ) -> dict:
        """The keys the mart `target` recomputes this run (profile_lake.mart_keys), from their
        query `sql` (`name`: the keys' name in the mart): evaluated once here on an incremental
        run, as literals when at most `limit` (None: the default), else cached in a session
        view."""
        from profile_lake.mart_keys import (
            DEFAULT_LITERAL_KEY_LIMIT,
            RecomputeKeys,
            evaluated_keys,
            keys_view_name,
            recompute_keys_kind,
        )

        kind = recompute_keys_kind(bool(incremental), bool(evaluate))
        if kind != "evaluate":
            return RecomputeKeys(kind, tuple(columns), sql).as_dict()
        spark = self._spark_session()
        view = keys_view_name(target, name)
        # dropping the view uncaches it: a previous run's keys go
        spark.sql(f"drop view if exists {view}")
        most = DEFAULT_LITERAL_KEY_LIMIT if limit is None else int(limit)
        frame = spark.sql(sql).select(*columns)
        keys = evaluated_keys(columns, frame.limit(most + 1).collect(), most, view, sql)
        if keys.kind == "relation":
            spark.sql(f"cache table {view} as select distinct {', '.join(columns)} from ({sql})")
        logger.debug(f"{target}: {name}: {keys.kind} ({len(keys.rows)} literal keys)")
        return keys.as_dict()

    @available
    def record_merge_keys(self, target: str, keys: dict) -> str:
        """Remember that the run's rows of the mart `target` are all of `keys` (merge_rows)."""
        from profile_lake.mart_feeds import table_name

        self._merge_keys[table_name(target)] = keys
        return ""

    @available
    def merge_key_predicates(self, target: str, unique_key: list[str]) -> list[str]:
        """The MERGE's literal conditions on `target` for the keys merge_rows recorded (none
        when they are not literals): Delta then reads the target's files of those keys only."""
        from profile_lake.mart_feeds import table_name
        from profile_lake.mart_keys import RecomputeKeys, merge_target_predicate

        keys = self._merge_keys.pop(table_name(target), None)
        if keys is None:
            return []
        predicate = merge_target_predicate(RecomputeKeys.from_dict(keys), unique_key)
        return [predicate] if predicate else []

    @available
    def recompute_keys_filter(self, keys: dict, columns: list[str]) -> str:
        """A source read's filter to the keys of `recompute_keys` (profile_lake.mart_keys)."""
        from profile_lake.mart_keys import RecomputeKeys, key_predicate

        return key_predicate(columns, RecomputeKeys.from_dict(keys))

    @available
    def compute_rows_once(self, view: str) -> str:
        """Compute the rows of the run's temporary view `view` once, into the session's blocks
        (a local checkpoint, as Delta's MERGE keeps its source), and name them `view`: a count
        and the MERGE after it then read those blocks instead of each evaluating the model and
        listing its Delta files again."""
        spark = self._spark_session()
        spark.table(view).localCheckpoint().createOrReplaceTempView(view)
        return ""

    @available
    def delta_table_property(self, relation: str, key: str) -> str | None:
        """A Delta table's property (None when unset), read from its log where it is local
        (profile_lake.spark.delta_history)."""
        from profile_lake.spark.delta_history import table_properties

        return table_properties(self._spark_session(), str(relation)).get(key)

    @available
    def compact_written_table(
        self, relation: str, zorder_by: object, max_small_files: object, tenants: object
    ) -> str:
        """After an incremental model wrote `relation`: OPTIMIZE the partitions the run may
        write (`tenants`: the run's, None for every tenant) that hold `max_small_files` small
        files or more, Z-ordered by `zorder_by` (profile_lake.compaction). Returns what it did,
        '' when nothing was due or the table is not on this machine. A compaction another
        writer beat is left for the next run."""
        from profile_lake.compaction import (
            CompactionError,
            max_small_files_setting,
            plan_compaction,
        )
        from profile_lake.delta_log import live_data_files
        from profile_lake.spark.delta_history import local_table_path

        try:
            limit = max_small_files_setting(max_small_files)
        except CompactionError as error:
            raise DbtRuntimeError(str(error)) from None
        spark = self._spark_session()
        path = local_table_path(spark, str(relation))
        files = None if path is None else live_data_files(path)
        if files is None:
            return ""
        scope = None if tenants is None else [str(tenant) for tenant in tenants]  # type: ignore[union-attr]
        zorder = zorder_by if isinstance(zorder_by, str | list | tuple) else None
        compaction = plan_compaction(str(relation), files, limit, scope, zorder)
        if compaction is None:
            return ""
        try:
            spark.sql(compaction.statement).collect()
        except Exception as error:
            if "Concurrent" not in str(error):
                raise
            return f"{compaction.describe()}: another run wrote it meanwhile, left for later"
        return compaction.describe()

    @available
    def delta_latest_commit(self, relation: str) -> dict[str, Any]:
        """A Delta table's latest commit: its version, and its time as naive UTC text."""
        from profile_lake.spark.delta_history import commit_history

        (latest,) = commit_history(self._spark_session(), str(relation), 1)
        return {
            "version": latest.version,
            "timestamp": latest.timestamp.strftime("%Y-%m-%d %H:%M:%S.%f"),
        }

    @available
    def swap_stamp(self, target: str, name: str, value: str, incremental: bool) -> str | None:
        """The value of the mart `target`'s stamp `name` (None when it has none, or when the
        run builds it anew); the post-hook stamps `value` in its place."""
        from profile_lake.mart_feeds import stamp_property

        self._stamps.setdefault(target, {})[stamp_property(name)] = value
        if not incremental:
            return None
        return self._stamps_before(target).get(stamp_property(name))

    def _stamps_before(self, target: str) -> dict[str, str]:
        """The mart `target`'s stamps as this run found them, read once, before the run's own
        commits to it (after its MERGE, a stamp file no longer describes its latest commit)."""
        from dbt_common.invocation import get_invocation_id

        from profile_lake.spark.mart_feeds import mart_stamps

        key = (get_invocation_id(), target)
        if key not in self._stamps_read:
            self._stamps_read[key] = mart_stamps(self._spark_session(), target)
        return self._stamps_read[key]

    @available
    def record_consumed_sql(self, target: str) -> str:
        """Record on `target` the source versions its run read and its other stamps; called by
        the model's post-hook, after its MERGE. A stamp file where the table's folder is on
        this machine (returns ''), else the ALTER TABLE for the hook to run ('' when nothing
        moved): profile_lake.spark.mart_feeds.record_stamps."""
        from dbt_common.invocation import get_invocation_id

        from profile_lake.spark.mart_feeds import mart_stamps, record_stamps

        reads = self._feed_reads.pop(target, {})
        stamps = self._stamps.pop(target, {})
        before = self._stamps_read.pop((get_invocation_id(), target), None)
        if not reads and not stamps:
            return ""
        if before is None:  # a full build: the table is its own, no stamp of before to keep
            before = mart_stamps(self._spark_session(), target)
        return record_stamps(self._spark_session(), target, before, reads, stamps)

    @available
    def create_tblproperties_sql(
        self, tblproperties: dict[str, Any] | None, model: dict[str, Any], enforce_contract: bool
    ) -> str:
        """The `tblproperties` clause of a table's CREATE: the configured properties, and, when
        its contract is enforced, its constraints (profile_lake.contract_constraints), so Delta
        checks them from the first row on with no read."""
        from profile_lake.contract_constraints import constraint_properties, tblproperties_sql

        properties = dict(tblproperties or {})
        if enforce_contract:
            properties.update(constraint_properties(self._declared_constraints(model)))
        return tblproperties_sql(properties)

    @available
    def sync_contract_constraints(self, relation: str, model: dict[str, Any]) -> list[str]:
        """Bring an existing table's Delta constraints to its contract's (no statement when
        nothing differs: the properties come from its log); returns the statements run."""
        from profile_lake.contract_constraints import (
            constraint_change_statements,
            constraint_changes,
        )
        from profile_lake.spark.delta_history import table_properties

        spark = self._spark_session()
        changes = constraint_changes(
            self._declared_constraints(model), table_properties(spark, relation)
        )
        statements = constraint_change_statements(relation, changes)
        for statement in statements:
            logger.info(f"{relation}: contract constraints: {statement}")
            spark.sql(statement)
        return statements

    @staticmethod
    def _declared_constraints(model: dict[str, Any]) -> list:
        from profile_lake.contract_constraints import ContractConstraintError, declared_constraints

        try:
            return declared_constraints(
                model["name"], model.get("columns") or {}, model.get("constraints") or []
            )
        except ContractConstraintError as error:
            raise DbtRuntimeError(str(error)) from None

    @available
    def metastore_is_shared(self) -> bool:
        """Whether other processes can use this session's metastore at the same time: not
        with embedded Derby (one process at a time), so runs there need no locks."""
        url = self._spark_session().conf.get("spark.hadoop.javax.jdo.option.ConnectionURL", "")
        return not url.startswith("jdbc:derby:")

    def _run_planner(self) -> RunPlanner:
        """This invocation's planner (profile_lake.run_planner): a warm process runs many."""

        from dbt.flags import get_flags
        from dbt_common.invocation import get_invocation_id

        from profile_lake.delta_log import local_warehouse
        from profile_lake.run_planner import RunPlanner, RunSettings, node_variables

        invocation = get_invocation_id()
        with self._planner_guard:
            if self._planner is None or self._planner[0] != invocation:
                flags = get_flags()
                settings = RunSettings(
                    command=str(getattr(flags, "WHICH", "")),
                    full_refresh=bool(getattr(flags, "FULL_REFRESH", False)),
                    variables=node_variables(getattr(flags, "VARS", None) or {}),
                    target=self.config.target_name,
                    empty=bool(getattr(flags, "EMPTY", False)),
                    defer=bool(getattr(flags, "DEFER", False)),
                )
                # the session's own warehouse: a warm process keeps the one it started with
                warehouse_dir = self._spark_session().conf.get("spark.sql.warehouse.dir")
                planner = RunPlanner.for_project(
                    Path(self.config.project_root),
                    ADAPTER_CODE_DIRS,
                    local_warehouse(warehouse_dir),
                    self.config.credentials.schema,
                    settings,
                )
                self._planner = (invocation, planner)
            return self._planner[1]

    @available
    def node_plan(
        self, node: dict[str, Any], graph: dict[str, Any], full_checks: object = False
    ) -> dict[str, object]:
        """Whether this run skips `node` (a model, seed, snapshot or data test), and why:
        skipped when nothing it reads changed since its last success (profile_lake.run_state).
        Decided from the Delta logs and files, with no Spark statement."""
        from profile_lake.checks import checks_only_written_rows

        planner = self._run_planner()
        scope = checks_only_written_rows(
            planner.settings.command, planner.settings.full_refresh, full_checks
        )
        exists = True
        if node["resource_type"] in ("model", "seed", "snapshot"):
            # the relation cache, filled at the run's start: no statement
            relation = self.get_relation(node.get("database"), node["schema"], node["alias"])
            exists = relation is not None
        plan = planner.plan(node, graph, "written rows" if scope else "every row", exists)
        return plan.as_dict()

    @available
    def skipped_node_table(self, resource_type: str) -> Any:
        """What a skipped node's main statement returns to dbt: a data test's one row that
        found nothing, a unit test's no row, actual or expected, a seed's no loaded row."""
        import agate

        if resource_type == "unit_test":
            return agate.Table([], ["actual_or_expected"], [agate.Text()])
        if resource_type == "test":
            return agate.Table(
                [[0, False, False]],
                ["failures", "should_warn", "should_error"],
                [agate.Number(), agate.Boolean(), agate.Boolean()],
            )
        return agate.Table([], [], [])

    @available
    def record_run_states(self, results: list[Any]) -> None:
        """Record, for the next run's plan, the nodes of this run that succeeded."""
        planner = self._planner[1] if self._planner is not None else None
        if planner is None:
            return
        succeeded = [
            result.node.unique_id
            for result in results or []
            if str(getattr(result.status, "value", result.status)) in ("success", "pass")
        ]
        try:
            recorded = planner.record(succeeded, self._planner[0])
        except OSError as error:  # the run succeeded: its next run only repeats the work
            logger.warning(f"run state: not recorded ({error}); the next run runs every node")
            recorded = []
        skipped = planner.skipped()
        logger.info(
            f"run state: {len(skipped)} nodes skipped (nothing they read changed), "
            f"{len(recorded)} recorded"
        )

    def _spark_session(self):
        from pyspark.sql import SparkSession

        # opening the thread's connection holds the lake (embedded Derby); dbt-spark starts the
        # SparkSession only at its first statement, so a method called before any (a
        # run-operation's) starts it here with the same settings; no statement runs
        self.connections.get_thread_connection().handle  # noqa: B018
        builder = SparkSession.builder.enableHiveSupport()
        for key, value in (self.config.credentials.server_side_parameters or {}).items():
            builder = builder.config(key, str(value))
        return builder.getOrCreate()

    def get_columns_in_relation(self, relation: Any) -> list[SparkColumn]:
        """The relation's columns from its analysed schema, as dbt-spark's `describe extended`
        gives them (names, and types as Spark writes them), but with no statement: on a run of a
        few rows, the two describes of each side of a MERGE were a tenth of its statements.
        [] when the relation does not exist, as dbt-spark."""
        from pyspark.errors import AnalysisException

        try:
            schema = self._spark_session().table(str(relation)).schema
        except AnalysisException as error:
            if error.getCondition() in ("TABLE_OR_VIEW_NOT_FOUND", "SCHEMA_NOT_FOUND"):
                return []
            raise DbtRuntimeError(str(error)) from None
        return [
            SparkColumn(
                table_database=None,
                table_schema=relation.schema,
                table_name=relation.name,
                table_type=relation.type,
                table_owner="",
                table_stats=None,
                column=field.name,
                column_index=index,
                dtype=field.dataType.simpleString(),
            )
            for index, field in enumerate(schema.fields)
        ]
