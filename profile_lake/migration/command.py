"""`profile-lake migrate ...`: bring a legacy Parquet dataset into the lake (docs/migration.md).

preflight   check a dataset (footers, one schema, partitions, the target name free)
in-place    convert it to Delta where it lies (no data file rewritten), audit, register
shadow      hydrate a new Delta table batch by batch (resumes a killed run), then audit
audit       audit a shadow again (counts per batch and in total, schema, key checksum)
publish     switch the target name to the audited shadow; the old files move aside
rollback    undo a migration at any step (before or after publish, until collected)
collect     delete a published migration's old files
status      where every migration stands (the audit trail)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from profile_lake.migration import maintenance
from profile_lake.migration.contract import CONTRACTS
from profile_lake.migration.source import require_folder
from profile_lake.migration.state import MigrationFiles, check_migration_id

ACTIONS = ("preflight", "in-place", "shadow", "audit", "publish", "rollback", "collect", "status")


def add_migrate_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("action", choices=ACTIONS, help="what to do (see above)")
    add("--id", dest="migration_id", help="the migration's id ([a-z0-9_]{1,64}); resumes it")
    add("--source", type=Path, help="the dataset's folder (Hive partition folders inside)")
    add("--source-table", help="the dataset's metastore table (external), if registered")
    add("--target", help="the Delta table to create, as schema.table")
    add("--key", action="append", default=[], help="a key column (repeat); audited by checksum")
    add(
        "--contract",
        choices=(*CONTRACTS, "none"),
        default="keys",
        help="rows breaking it are quarantined: keys (key columns present), records_snapshot "
        "(SPEC.md section 2's record fields), or none (no row checked)",
    )
    add("--record-types", default="profile,event", help="records_snapshot: allowed record types")
    add("--max-payload-bytes", type=int, default=1_048_576, help="records_snapshot: payload size")
    add(
        "--partition-type",
        action="append",
        default=[],
        metavar="NAME=TYPE",
        help="a partition column's type (string, bigint, int, date); else inferred",
    )
    add("--batch-files", type=int, default=64, help="shadow: at most this many files a batch")
    add(
        "--batch-mb",
        type=int,
        default=0,
        help="shadow: pack consecutive partitions smaller than this many MB of Parquet into "
        "one batch (default 0: a batch per partition); fewer batches, fewer commits",
    )
    add("--publish", action="store_true", help="shadow: publish when the audit passes")
    add("--batch-pause-seconds", type=float, default=0.0, help=argparse.SUPPRESS)


def _partition_types(pairs: list[str]) -> dict[str, str]:
    types = {}
    for pair in pairs:
        name, sep, kind = pair.partition("=")
        if not sep:
            raise SystemExit(f"--partition-type {pair!r}: write NAME=TYPE, e.g. dt=date")
        types[name] = kind
    return types


def _contract(args: argparse.Namespace) -> dict[str, object]:
    if args.contract == "none":
        return {"name": "none"}
    return {
        "name": args.contract,
        "record_types": [t for t in args.record_types.split(",") if t],
        "max_payload_bytes": args.max_payload_bytes,
    }


def _require(args: argparse.Namespace, *names: str) -> None:
    missing = [f"--{name.replace('_', '-')}" for name in names if not getattr(args, name)]
    if missing:
        raise SystemExit(f"migrate {args.action} needs {', '.join(missing)}")


def _source_root(lake, args: argparse.Namespace) -> Path:
    if args.source:
        return args.source.resolve()
    if args.source_table:
        detail = lake.spark.sql(f"describe table extended {args.source_table}").collect()
        location = {row["col_name"]: row["data_type"] for row in detail}.get("Location", "")
        return Path(str(location).removeprefix("file:"))
    raise SystemExit(f"migrate {args.action} needs --source or --source-table")


def _check_source(args: argparse.Namespace, home: Path) -> None:
    """A --source folder the action would read must exist: checked before Spark starts. (A
    resumed shadow follows its plan and reads no --source.)"""
    if args.source is None or args.action not in ("preflight", "in-place", "shadow"):
        return
    resumed = args.action == "shadow" and args.migration_id
    if resumed and MigrationFiles(home, args.migration_id).exists():
        return
    require_folder(args.source)


def _session_sizing(args: argparse.Namespace) -> dict[str, str]:
    """The session's settings by size (code generation, task counts) when the action reads a
    --source folder: the adapter's choice with that folder counted beside the lake's tables
    (the migration reads it whole). Without one, the adapter's choice by the lake alone."""
    from profile_lake.lake_size import session_sizing
    from profile_lake.spark.session import profile_target
    from profile_lake.techniques import CodeGenerationError, TaskPartitionsError

    if args.source is None:
        return {}
    target = profile_target(os.environ.get("PROFILE_LAKE_TARGET", "local"))
    try:
        code_generation, partitions = session_sizing(target["server_side_parameters"], args.source)
    except (CodeGenerationError, TaskPartitionsError) as error:
        raise SystemExit(str(error)) from None
    return {**code_generation.spark_settings(), **partitions.spark_settings()}


def run_migrate(args: argparse.Namespace) -> int:
    from profile_lake.locks.process_lock import LakeBusyError
    from profile_lake.spark import migration as spark_migration
    from profile_lake.spark.session import profile_session

    home = Path(os.environ.get("PROFILE_LAKE_HOME", ".lake")).resolve()
    try:
        _check_source(args, home)  # before Spark starts
        lake = spark_migration.Lake(
            profile_session(**_session_sizing(args)),
            home,
            os.environ.get("PROFILE_LAKE_SCHEMA", "profile_lake"),
        )
        return _dispatch(lake, args, spark_migration)
    except (
        spark_migration.MigrationRefused,
        maintenance.InMaintenance,
        LakeBusyError,
        ValueError,
        FileNotFoundError,
        NotADirectoryError,
    ) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


def _dispatch(lake, args: argparse.Namespace, sm) -> int:
    action = args.action
    if action == "status":
        from profile_lake.migration.trail import standing

        for line in standing(sm.status(lake)) or ["no migration yet"]:
            print(line)
        return 0
    if action == "preflight":
        _require(args, "target")
        _, report = sm.run_preflight(
            lake,
            _source_root(lake, args),
            args.target,
            args.key,
            _partition_types(args.partition_type),
            args.source_table,
        )
        print(report.describe())
        return 0 if report.ok else 1
    _require(args, "migration_id")
    check_migration_id(args.migration_id)
    if action in ("in-place", "shadow") and not lake.files(args.migration_id).exists():
        _require(args, "target", "key")
    if action == "in-place":
        differences = sm.in_place(
            lake,
            args.migration_id,
            _source_root(lake, args),
            args.target,
            args.key,
            _contract(args),
            _partition_types(args.partition_type),
            args.source_table,
        )
        return _report_audit(differences)
    if action == "shadow":
        exists = lake.files(args.migration_id).exists()
        with lake.step_group():  # the trail rows of preflight, hydrate and audit: one commit
            plan = sm.start_shadow(
                lake,
                args.migration_id,
                _source_root(lake, args) if not exists else Path(),
                args.target or "",
                args.key,
                _contract(args),
                _partition_types(args.partition_type),
                args.batch_files,
                args.source_table,
                args.batch_mb * 1_000_000,
            )
            sm.hydrate(lake, plan, pause_seconds=args.batch_pause_seconds)
            differences = sm.audit(lake, plan)
        code = _report_audit(differences)
        if code == 0 and args.publish:
            print(f"published; old files in {sm.publish(lake, plan)}")
        return code
    plan = lake.files(args.migration_id).plan()
    if action == "audit":
        return _report_audit(sm.audit(lake, plan))
    if action == "publish":
        print(f"published; old files in {sm.publish(lake, plan)}")
    elif action == "rollback":
        print(sm.rollback(lake, plan))
    elif action == "collect":
        print(sm.collect(lake, plan))
    return 0


def _report_audit(differences: list[str]) -> int:
    if not differences:
        print("audit passed: the table equals the source less its quarantined rows")
        return 0
    print("audit failed; nothing was published. What differs:", file=sys.stderr)
    for difference in differences:
        print(f"  - {difference}", file=sys.stderr)
    return 1
