"""`profile-lake` command: generate landing data, print a run summary, write a report page,
look up profiles."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from profile_lake.generator.command import DESCRIPTION as GENERATE_DESCRIPTION
from profile_lake.generator.command import FORMATTER as GENERATE_FORMATTER
from profile_lake.generator.command import add_generate_arguments, run_generate


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
    args = parser.parse_args(argv)
    if args.command == "summary":
        from profile_lake.summary import print_summary

        return print_summary()
    if args.command == "generate":
        return run_generate(args)
    if args.command == "report":
        from profile_lake.report import run_report

        return run_report(args.output)
    if args.command == "lookup":
        from profile_lake.lookup import run_lookup

        return run_lookup(args.pairs, args.keys_file)
    return 2


if __name__ == "__main__":
    sys.exit(main())
