"""A model contract's constraints as Delta CHECK constraints, enforced on every write.

Delta keeps a table's CHECK constraints as table properties `delta.constraints.<name>` and
checks every row an INSERT, MERGE or CREATE TABLE AS SELECT writes against them, with no
read of the table. Written as properties of the statement that creates the table, they are
in force from its first row; `ALTER TABLE ADD CONSTRAINT` on a filled table would scan it.

A column's `not_null` becomes `<column> is not null` (Delta refuses NULL for a CHECK too, so
a nullable column's check must say `x is null or ...`). dbt's other constraint types
(unique, primary and foreign keys) are not enforced by Delta and stay data tests.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from profile_lake.sql import sql_string

PROPERTY_PREFIX = "delta.constraints."


class ContractConstraintError(ValueError):
    """A contract constraint Delta cannot carry as declared."""


@dataclass(frozen=True)
class DeltaConstraint:
    name: str
    expression: str

    @property
    def property_key(self) -> str:
        return PROPERTY_PREFIX + self.name


def _normalized(expression: str) -> str:
    """One line, single spaces: YAML's folded text and Delta's stored text compare equal."""
    return " ".join(expression.split())


def _check(owner: str, constraint: Mapping[str, Any]) -> DeltaConstraint:
    name = constraint.get("name")
    expression = constraint.get("expression")
    if not name or not expression:
        raise ContractConstraintError(
            f"{owner}: a check constraint needs a `name` and an `expression` "
            "(Delta keys the constraint by its name)"
        )
    return DeltaConstraint(str(name).lower(), _normalized(str(expression)))


def declared_constraints(
    model_name: str,
    columns: Mapping[str, Mapping[str, Any]],
    model_constraints: Sequence[Mapping[str, Any]],
) -> list[DeltaConstraint]:
    """The Delta constraints a model's contract declares: each column's `not_null` and
    `check`, then the model's own `check`s. Other types are left to data tests."""
    found: list[DeltaConstraint] = []
    for column_name, column in columns.items():
        for constraint in column.get("constraints") or ():
            if constraint.get("type") == "not_null":
                found.append(
                    DeltaConstraint(f"{column_name}_not_null".lower(), f"{column_name} is not null")
                )
            elif constraint.get("type") == "check":
                found.append(_check(f"{model_name}.{column_name}", constraint))
    for constraint in model_constraints or ():
        if constraint.get("type") == "check":
            found.append(_check(model_name, constraint))
    names = [constraint.name for constraint in found]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ContractConstraintError(
            f"{model_name}: constraint names must be unique in a table: {', '.join(duplicates)}"
        )
    return found


def constraint_properties(constraints: Iterable[DeltaConstraint]) -> dict[str, str]:
    return {constraint.property_key: constraint.expression for constraint in constraints}


def tblproperties_sql(properties: Mapping[str, Any]) -> str:
    """The `tblproperties (...)` clause of a CREATE statement, or nothing."""
    if not properties:
        return ""
    pairs = ", ".join(
        f"{sql_string(key)} = {sql_string(str(value))}" for key, value in properties.items()
    )
    return f"tblproperties ({pairs})"


@dataclass(frozen=True)
class ConstraintChanges:
    drops: tuple[str, ...]
    adds: tuple[DeltaConstraint, ...]


def constraint_changes(
    declared: Sequence[DeltaConstraint], existing_properties: Mapping[str, str]
) -> ConstraintChanges:
    """What brings an existing table's constraints to the declared ones: those no longer
    declared, or declared differently, are dropped; the missing ones added (an add checks the
    rows already there, once)."""
    existing = {
        key[len(PROPERTY_PREFIX) :].lower(): _normalized(value)
        for key, value in existing_properties.items()
        if key.lower().startswith(PROPERTY_PREFIX)
    }
    wanted = {constraint.name: constraint for constraint in declared}
    drops = tuple(
        sorted(
            name
            for name, expression in existing.items()
            if name not in wanted or wanted[name].expression != expression
        )
    )
    adds = tuple(
        constraint
        for constraint in declared
        if constraint.name not in existing or constraint.name in drops
    )
    return ConstraintChanges(drops, adds)


def constraint_change_statements(relation: str, changes: ConstraintChanges) -> list[str]:
    drops = [f"alter table {relation} drop constraint if exists {name}" for name in changes.drops]
    adds = [
        f"alter table {relation} add constraint {constraint.name} check ({constraint.expression})"
        for constraint in changes.adds
    ]
    return drops + adds
