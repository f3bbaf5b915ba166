"""`profile-lake summary`: what the last run built, read from the Delta tables themselves.

Uses the independent deltalake reader (row counts come from the Delta log's file statistics and
the deletion vectors), so it needs no JVM and runs in about a second after `dbt build`.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable

from profile_lake.delta_reader import has_deletion_vectors, read_delta
from profile_lake.ingest.lines import STREAMS
from profile_lake.run_history import last_run_nodes
from profile_lake.techniques import technique_said


def _row_count(table_dir: Path) -> str:
    """Rows by the file statistics, less the rows deletion vectors mark deleted."""
    table = DeltaTable(str(table_dir))
    actions = table.get_add_actions(flatten=True)
    rows = int(sum(value or 0 for value in actions.column("num_records").to_pylist()))
    if has_deletion_vectors(table):
        kept = pa.table(table.deletion_vectors()).column("selection_vector")
        rows -= sum(mask.count(False) for mask in kept.to_pylist())
    return f"{rows:>10} rows"


def _tables(warehouse: Path, schema: str) -> list[tuple[str, Path]]:
    found = []
    for database in sorted(warehouse.glob(f"{schema}*.db")):
        for table_dir in sorted(database.iterdir()):
            if (table_dir / "_delta_log").is_dir():
                found.append((f"{database.name.removesuffix('.db')}.{table_dir.name}", table_dir))
    return found


def _graph_health(exclusions: pa.Table) -> list[str]:
    """Links cut by each linking rule, per tenant (identity_link_exclusions)."""
    cut = Counter(
        (row["tenant_id"], row["rule"] + (f" {row['namespace']}" if row["namespace"] else ""))
        for row in exclusions.to_pylist()
    )
    if not cut:
        return ["  identity links cut by rules: none"]
    lines = ["  identity links cut by rules, per tenant:"]
    for tenant in sorted({tenant for tenant, _ in cut}):
        listed = ", ".join(
            f"{rule} {count}" for (owner, rule), count in sorted(cut.items()) if owner == tenant
        )
        lines.append(f"    {tenant}: {listed}")
    return lines


def _last_run_techniques(run_nodes: pa.Table) -> list[str]:
    """How the last recorded run brought each mart up to date (its nodes' messages say the
    technique: profile_lake.techniques), and how many nodes it skipped."""
    nodes = last_run_nodes(run_nodes.to_pylist())
    if not nodes:
        return []
    chosen: dict[str, list[str]] = {}
    for row in nodes:
        technique = technique_said(row["message"])
        if technique is not None:
            chosen.setdefault(technique[0], []).append(row["node_name"])
    skipped = sum(1 for row in nodes if (row["message"] or "").startswith("skipped:"))
    said = ", ".join(f"{name} {len(names)}" for name, names in sorted(chosen.items()))
    return [
        f"  last run: {skipped} of {len(nodes)} nodes skipped; marts by technique: {said or 'none'}"
    ]


def erasure_summary(requests: list[dict]) -> list[str]:
    """One line on the erasure requests applied (SPEC.md section 7), none when there is none."""
    if not requests:
        return []
    identities = sum(row["identities_erased"] or 0 for row in requests)
    records = sum(row["records_erased"] or 0 for row in requests)
    # a line's rows: one per staging table (landing and ingest_errors hold the same lines)
    lines = sum(
        count
        for row in requests
        for table, count in dict(row.get("rows_removed") or {}).items()
        if table.startswith("stg_")
    )
    purged = sum(1 for row in requests if row["purged_at"] is not None)
    return [
        f"  erasure requests: {len(requests)} applied, {purged} purged; erased "
        f"{identities} known identities, {records} records, {lines} landed lines"
    ]


def summarize(home: Path, schema: str) -> list[str]:
    warehouse = home / "warehouse"
    tables = _tables(warehouse, schema)
    if not tables:
        return [f"No tables of schema {schema} under {warehouse}: run `make run` first."]
    lines = [f"Profile Lake: schema {schema}, lake {home.resolve()}"]
    by_name = {name: path for name, path in tables}
    accounting = by_name.get(f"{schema}.ingest_file_accounting")
    if accounting is not None:
        files = read_delta(accounting).to_pylist()
        for stream in STREAMS:
            rows = [row for row in files if row["stream"] == stream]
            landed = sum(row["lines_landed"] for row in rows)
            accepted = sum(row["lines_accepted"] for row in rows)
            quarantined = sum(row["lines_quarantined"] for row in rows)
            erased = sum(row.get("lines_erased") or 0 for row in rows)
            lines.append(
                f"  {stream:<13} {len(rows):>5} files {landed:>9} lines landed = "
                f"{accepted} accepted + {quarantined} quarantined"
                + (f" + {erased} erased" if erased else "")
            )
    errors = by_name.get(f"{schema}.ingest_errors")
    if errors is not None:
        codes = Counter(read_delta(errors, ["error_code"]).column("error_code").to_pylist())
        if codes:
            listed = ", ".join(f"{code} {count}" for code, count in codes.most_common())
            lines.append(f"  problems quarantined by code: {listed}")
    requests = by_name.get(f"{schema}.erasure_requests")
    if requests is not None:
        lines += erasure_summary(read_delta(requests).to_pylist())
    exclusions = by_name.get(f"{schema}.identity_link_exclusions")
    if exclusions is not None:
        lines += _graph_health(read_delta(exclusions, ["tenant_id", "rule", "namespace"]))
    run_nodes = by_name.get(f"{schema}_control.run_nodes")
    if run_nodes is not None:
        columns = ["run_id", "node_name", "message", "completed_at"]
        lines += _last_run_techniques(read_delta(run_nodes, columns))
    lines.append("Tables:")
    width = max(len(name) for name, _ in tables)
    lines += [f"  {name:<{width}} {_row_count(path)}" for name, path in tables]
    return lines


def print_summary() -> int:
    home = Path(os.environ.get("PROFILE_LAKE_HOME", ".lake"))
    schema = os.environ.get("PROFILE_LAKE_SCHEMA", "profile_lake")
    for line in summarize(home, schema):
        print(line)
    return 0
