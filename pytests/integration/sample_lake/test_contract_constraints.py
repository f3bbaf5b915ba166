"""Every constraint of the contract's tables is Delta's: a planted row that breaks it is refused.

The contract's `not_null` and `check` constraints are written into each table as Delta CHECK
constraints (profile_lake.contract_constraints); the data tests they replaced are gone. For
each one, a copy of a real row of the sample lake, changed to break that constraint only, is
inserted: Delta must refuse it, naming the constraint, and the table must not change.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from profile_lake.contract_constraints import DeltaConstraint, declared_constraints

pytestmark = pytest.mark.integration

# For each check constraint, the columns a planted row changes to break it (SQL over the row).
CHECK_BREAKERS: dict[str, dict[str, str]] = {
    "change_type_accepted": {"change_type": "'upsert'"},
    "reason_accepted": {"reason": "'gdpr'"},
    "stream_accepted": {"stream": "'orders'"},
    "stage_accepted": {"stage": "'load'"},
    "rule_accepted": {"rule": "'allowed'"},
    "canonical_flag_matches": {"is_canonical": "not is_canonical"},
    "profile_is_its_smallest_identity": {"profile_id": "concat(identity_id, '~')"},
    "counts_match_their_lists": {"identity_count": "identity_count + 1"},
    "link_is_ordered_and_namespaced": {"smaller_identity_id": "larger_identity_id"},
    "line_kept_except_erasures": {"line": "case when stream = 'erasures' then 'x' end"},
}


def constrained_tables(manifest: dict[str, Any]) -> dict[str, list[DeltaConstraint]]:
    """model name -> its Delta constraints, for the tables (not views) of enforced contracts."""
    return {
        node["name"]: declared_constraints(node["name"], node["columns"], node["constraints"])
        for node in manifest["nodes"].values()
        if node["resource_type"] == "model"
        and node["config"]["contract"]["enforced"]
        and node["config"]["materialized"] in ("table", "incremental")
    }


@pytest.fixture(scope="module")
def constraints(sample_lake) -> dict[str, list[DeltaConstraint]]:
    manifest_path = sample_lake.lake_home / "target" / sample_lake.schema / "manifest.json"
    found = constrained_tables(json.loads(manifest_path.read_text()))
    assert sum(len(declared) for declared in found.values()) >= 60, found
    return found


def planted_row_sql(table: str, columns: list[tuple[str, str]], constraint: DeltaConstraint) -> str:
    """An INSERT of one existing row of `table` with `constraint`'s columns changed."""
    if constraint.name.endswith("_not_null"):
        column = constraint.name.removesuffix("_not_null")
        changes = {column: f"cast(null as {dict(columns)[column]})"}
    else:
        changes = CHECK_BREAKERS[constraint.name]
    select = ", ".join(changes.get(name, name) for name, _ in columns)
    return f"insert into {table} select {select} from {table} limit 1"


def test_every_check_constraint_has_a_planted_violation(constraints) -> None:
    checks = {c.name for declared in constraints.values() for c in declared}
    checks = {name for name in checks if not name.endswith("_not_null")}
    assert checks == set(CHECK_BREAKERS)


def test_a_row_breaking_any_constraint_is_refused_and_named(
    sample_lake, spark, constraints
) -> None:
    refused: list[str] = []
    for model, declared in sorted(constraints.items()):
        table = sample_lake.table(model)
        columns = [
            (field.name, field.dataType.simpleString()) for field in spark.table(table).schema
        ]
        assert spark.table(table).limit(1).count() == 1, f"{table} has no row to copy"
        version = spark.sql(f"describe history {table} limit 1").first()["version"]
        names = {other.name for other in declared}
        for constraint in declared:
            try:
                spark.sql(planted_row_sql(table, columns, constraint))
            except Exception as error:  # Py4J wraps Delta's exception
                message = str(error).split("\tat ")[0]
                assert "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES" in message, message[:500]
                named = re.search(r"CHECK constraint (\w+) ", message)
                assert named, message[:500]
                # a null can break a check of the same column first: that one is named then
                assert named.group(1) == constraint.name or (
                    constraint.name.endswith("_not_null")
                    and named.group(1) in names
                    and f"- {constraint.name.removesuffix('_not_null')} : null" in message
                ), message[:500]
                refused.append(f"{model}.{constraint.name}")
            else:
                pytest.fail(f"{table}: a row breaking {constraint.name} was written")
        assert spark.sql(f"describe history {table} limit 1").first()["version"] == version
    assert len(refused) == sum(len(declared) for declared in constraints.values())
