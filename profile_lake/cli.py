"""`profile-lake` command: generate landing data, print a run summary, write a report page,
look up profiles, migrate legacy Parquet datasets, backfill a tenant's snapshot, run the
pipeline as files land (watch), land a request to erase a person (forget), purge the lake's
history (purge)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from profile_lake.erasure.command import __doc__ as FORGET_DESCRIPTION
from profile_lake.erasure.command import add_forget_arguments, run_forget
from profile_lake.erasure.purge_command import __doc__ as PURGE_DESCRIPTION
from profile_lake.erasure.purge_command import add_purge_arguments, run_purge
from profile_lake.generator.command import DESCRIPTION as GENERATE_DESCRIPTION
from profile_lake.generator.command import FORMATTER as GENERATE_FORMATTER
from profile_lake.generator.command import add_generate_arguments, run_generate
from profile_lake.generator.legacy import __doc__ as LEGACY_DESCRIPTION
from profile_lake.generator.legacy import add_legacy_arguments, run_generate_legacy
from profile_lake.migration.backfill import __doc__ as BACKFILL_DESCRIPTION
from profile_lake.migration.backfill import add_backfill_arguments, run_backfill
from profile_lake.migration.command import __doc__ as MIGRATE_DESCRIPTION
from profile_lake.migration.command import add_migrate_arguments, run_migrate
from profile_lake.watch.command import DESCRIPTION as WATCH_DESCRIPTION
from profile_lake.watch.command import add_watch_arguments


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="profile-lake", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("summary", help="print what the last run built")
    generate = sub.add_parser(
        "generate",
        help="write deterministic landing data",
        description=GENERATE_DESCRIPTION,
        formatter_class=GENERATE_FORMATTER,
    )
    add_generate_arguments(generate)
    lookup = sub.add_parser(
        "lookup",
        help="print the profiles holding some identities (no Spark: reads the Delta tables)",
        description="Print, as one JSON line per key, the profile holding each (tenant, "
        "identity) key, from identity_index and profiles of PROFILE_LAKE_SCHEMA under "
        "PROFILE_LAKE_HOME. Exit 1 when a key has no profile.",
    )
    lookup.add_argument("pairs", nargs="*", metavar="TENANT IDENTITY", help="keys, as pairs")
    lookup.add_argument(
        "--keys-file", type=Path, help="a file of tenant_id,identity_id lines (a multi-key load)"
    )
    migrate = sub.add_parser(
        "migrate",
        help="bring a legacy Parquet dataset into the lake (in place or through a shadow)",
        description=MIGRATE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_migrate_arguments(migrate)
    legacy = sub.add_parser(
        "generate-legacy",
        help="write a deterministic legacy Parquet dataset (for migrations)",
        description=LEGACY_DESCRIPTION,
    )
    add_legacy_arguments(legacy)
    backfill = sub.add_parser(
        "backfill",
        help="land a tenant's legacy snapshot of records (SPEC.md section 6)",
        description=BACKFILL_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_backfill_arguments(backfill)
    report = sub.add_parser(
        "report",
        help="write an HTML page of runs, lag, bad input and identity-graph health",
        description="Write one self-contained HTML file (no script, no network) charting the "
        "run history, lag per tenant, quarantined input and the identity graph of "
        "PROFILE_LAKE_SCHEMA under PROFILE_LAKE_HOME, read without Spark.",
    )
    report.add_argument(
        "-o", "--output", type=Path, default=Path("report.html"), help="default: report.html"
    )
    watch = sub.add_parser(
        "watch",
        help="run `dbt build` in this process whenever files land (one warm Spark session)",
        description=WATCH_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_watch_arguments(watch)
    forget = sub.add_parser(
        "forget",
        help="land a request to erase a person (SPEC.md section 7)",
        description=FORGET_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_forget_arguments(forget)
    purge = sub.add_parser(
        "purge",
        help="rewrite every table so no file keeps what the tables no longer hold",
        description=PURGE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_purge_arguments(purge)
    args = parser.parse_args(argv)
    if args.command == "summary":
        from profile_lake.summary import print_summary

        return print_summary()
    if args.command == "generate":
        return run_generate(args)
    if args.command == "migrate":
        return run_migrate(args)
    if args.command == "backfill":
        return run_backfill(args)
    if args.command == "generate-legacy":
        return run_generate_legacy(args)
    if args.command == "report":
        from profile_lake.report import run_report

        return run_report(args.output)
    if args.command == "watch":
        from profile_lake.watch.command import run_watch

        return run_watch(args)
    if args.command == "forget":
        return run_forget(args)
    if args.command == "purge":
        return run_purge(args)
    if args.command == "lookup":
        from profile_lake.lookup import run_lookup

        return run_lookup(args.pairs, args.keys_file)
    return 2


if __name__ == "__main__":
    sys.exit(main())
