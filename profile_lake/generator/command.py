"""`profile-lake generate`: the command-line face of the generator."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from profile_lake.generator.config import DEFAULT_INGEST_BASE, GeneratorConfig

DESCRIPTION = (
    "Write deterministic landing data (records/, id_mutations/, entity_names/ JSON lines, with "
    "bad lines at --bad-rate) into DIR, beside any part files already there; optionally write a "
    "manifest of every file and every bad line with the error codes the pipeline must report."
)
FORMATTER = argparse.ArgumentDefaultsHelpFormatter


def add_generate_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `generate` (the defaults are GeneratorConfig's)."""
    add = parser.add_argument
    add("--out", required=True, type=Path, metavar="DIR", help="landing directory")
    add("--seed", type=int, default=7, metavar="N", help="same seed, same bytes")
    add("--tenants", type=int, default=3, metavar="N", help="tenants (1-8), in TENANTS order")
    add("--records-per-tenant", type=int, default=100, metavar="N", help="records per tenant")
    add("--events-per-record", type=int, default=3, metavar="N", help="mean events per record")
    add("--payload-fields", type=int, default=20, metavar="N", help="leaf fields per payload")
    add("--payload-depth", type=int, default=2, metavar="N", help="nesting levels of payloads")
    add("--related-ids", type=float, default=2.0, metavar="X", help="mean related ids (max 100)")
    add("--delete-rate", type=float, default=0.1, metavar="P", help="share of records deleted")
    add("--recreate-rate", type=float, default=0.5, metavar="P", help="deleted ones re-created")
    add("--out-of-order-rate", type=float, default=0.3, metavar="P", help="entities sent shuffled")
    add("--duplicate-rate", type=float, default=0.05, metavar="P", help="lines sent twice")
    add("--renames-per-tenant", type=int, default=10, metavar="N", help="renames per tenant")
    add("--names-per-tenant", type=int, default=30, metavar="N", help="named identities/tenant")
    add("--bad-rate", type=float, default=0.03, metavar="P", help="share of bad lines")
    add("--lines-per-file", type=int, default=5000, metavar="N", help="lines per landing file")
    add("--gzip-every", type=int, default=0, metavar="N", help="gzip every Nth file (0: never)")
    add("--manifest", type=Path, default=None, metavar="PATH", help="write the manifest here")
    add("--ingest-base", default=DEFAULT_INGEST_BASE, metavar="TS", help="all times before it")
    add("--quiet", action="store_true", help="no progress on stderr")


def config_from_args(args: argparse.Namespace) -> GeneratorConfig:
    return GeneratorConfig(
        out=args.out,
        seed=args.seed,
        tenants=args.tenants,
        records_per_tenant=args.records_per_tenant,
        events_per_record=args.events_per_record,
        payload_fields=args.payload_fields,
        payload_depth=args.payload_depth,
        related_ids=args.related_ids,
        delete_rate=args.delete_rate,
        recreate_rate=args.recreate_rate,
        out_of_order_rate=args.out_of_order_rate,
        duplicate_rate=args.duplicate_rate,
        renames_per_tenant=args.renames_per_tenant,
        names_per_tenant=args.names_per_tenant,
        bad_rate=args.bad_rate,
        lines_per_file=args.lines_per_file,
        gzip_every=args.gzip_every,
        manifest=args.manifest,
        ingest_base=args.ingest_base,
        quiet=args.quiet,
    )


def run_generate(args: argparse.Namespace) -> int:
    """Run the generator; a bad option is reported as a usage error (exit code 2)."""
    from profile_lake.generator.core import generate

    try:
        config = config_from_args(args)
    except ValueError as error:
        print(f"profile-lake generate: {error}", file=sys.stderr)
        return 2
    generate(config)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m profile_lake.generator", description=DESCRIPTION, formatter_class=FORMATTER
    )
    add_generate_arguments(parser)
    return run_generate(parser.parse_args(argv))
