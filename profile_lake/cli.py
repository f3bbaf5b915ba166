"""`profile-lake` command: generate landing data, print a run summary."""

from __future__ import annotations

import argparse
import sys

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
    args = parser.parse_args(argv)
    if args.command == "summary":
        from profile_lake.summary import print_summary

        return print_summary()
    if args.command == "generate":
        return run_generate(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
