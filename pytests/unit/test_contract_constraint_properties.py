"""A model contract's constraints as Delta table properties (profile_lake.contract_constraints)."""

from __future__ import annotations

import pytest

from profile_lake.contract_constraints import (
    ConstraintChanges,
    ContractConstraintError,
    DeltaConstraint,
    constraint_change_statements,
    constraint_changes,
    constraint_properties,
    declared_constraints,
    tblproperties_sql,
)

COLUMNS = {
    "tenant_id": {"constraints": [{"type": "not_null"}]},
    "change_type": {
        "constraints": [
            {
                "type": "check",
                "name": "change_type_accepted",
                "expression": "change_type in ('insert', 'delete')",
            }
        ]
    },
    "note": {"constraints": []},
}
MODEL_CHECKS = [
    {"type": "check", "name": "Ordered", "expression": "a <\n  b"},
    {"type": "unique", "columns": ["tenant_id"]},
]


def test_not_null_and_checks_become_named_delta_constraints() -> None:
    assert declared_constraints("m", COLUMNS, MODEL_CHECKS) == [
        DeltaConstraint("tenant_id_not_null", "tenant_id is not null"),
        DeltaConstraint("change_type_accepted", "change_type in ('insert', 'delete')"),
        DeltaConstraint("ordered", "a < b"),
    ]


def test_a_check_without_a_name_says_what_it_needs() -> None:
    with pytest.raises(ContractConstraintError, match=r"m\.x: a check constraint needs a `name`"):
        declared_constraints(
            "m", {"x": {"constraints": [{"type": "check", "expression": "x > 0"}]}}, []
        )


def test_two_constraints_of_one_name_are_refused() -> None:
    checks = [{"type": "check", "name": "x_not_null", "expression": "x > 0"}]
    with pytest.raises(ContractConstraintError, match="must be unique in a table: x_not_null"):
        declared_constraints("m", {"x": {"constraints": [{"type": "not_null"}]}}, checks)


def test_the_clause_quotes_properties_as_spark_strings() -> None:
    properties = {
        "delta.appendOnly": "true",
        **constraint_properties(declared_constraints("m", COLUMNS, [])),
    }
    assert tblproperties_sql(properties) == (
        "tblproperties ('delta.appendOnly' = 'true', "
        "'delta.constraints.tenant_id_not_null' = 'tenant_id is not null', "
        "'delta.constraints.change_type_accepted' = 'change_type in (\\'insert\\', \\'delete\\')')"
    )
    assert tblproperties_sql({}) == ""


def test_an_unchanged_table_needs_no_statement() -> None:
    declared = declared_constraints("m", COLUMNS, MODEL_CHECKS)
    existing = {"delta.appendOnly": "true", "delta.constraints.ORDERED": "a  <  b"} | {
        constraint.property_key: constraint.expression for constraint in declared[:2]
    }
    assert constraint_changes(declared, existing) == ConstraintChanges((), ())


def test_a_table_gains_new_constraints_and_loses_dropped_or_changed_ones() -> None:
    declared = declared_constraints("m", COLUMNS, [])
    existing = {
        "delta.constraints.retired": "x > 0",
        "delta.constraints.change_type_accepted": "change_type in ('insert')",
    }
    changes = constraint_changes(declared, existing)
    assert changes.drops == ("change_type_accepted", "retired")
    assert [constraint.name for constraint in changes.adds] == [
        "tenant_id_not_null",
        "change_type_accepted",
    ]
    assert constraint_change_statements("s.t", changes) == [
        "alter table s.t drop constraint if exists change_type_accepted",
        "alter table s.t drop constraint if exists retired",
        "alter table s.t add constraint tenant_id_not_null check (tenant_id is not null)",
        "alter table s.t add constraint change_type_accepted"
        " check (change_type in ('insert', 'delete'))",
    ]
