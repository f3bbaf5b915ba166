"""The `identity_rules` seed (SPEC §5): its rows parsed, checked, and merged per tenant.

Rows are `tenant_id` (a tenant or `*`), `rule`, `namespace`, `value`:

* `blocked`: a SQL LIKE pattern over canonical identities (`%`, `_`, `\\` escapes one of them);
  an exact identity is a pattern matching itself;
* `namespace_limit`: at most `value` identities of `namespace` in one profile;
* `max_identities`: at most `value` identities in one profile.

A tenant's own `namespace_limit` (per namespace) and `max_identities` rows replace the `*` ones;
`blocked` rows of `*` and of the tenant all apply. This module is the one place that reads the
rows: the on-run-start check (through the adapter, from the seed's CSV) and the graph model
(from the loaded seed) both call :func:`parse_rule_rows`.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from profile_lake.project import identity_namespaces, tenant_id_pattern

RULES = ("blocked", "max_identities", "namespace_limit")
ALL_TENANTS = "*"
POSITIVE_INTEGER = re.compile(r"^[1-9][0-9]{0,17}$")
COLUMNS = ("tenant_id", "rule", "namespace", "value")


class IdentityRulesError(ValueError):
    """A row of the identity_rules seed breaks SPEC.md section 5."""


@dataclass(frozen=True)
class RuleRow:
    """One row of the seed; `line` is its line in the CSV (the header is line 1)."""

    line: int
    tenant_id: str
    rule: str
    namespace: str
    value: str

    def describe(self) -> str:
        return (
            f"identity_rules line {self.line} "
            f"({self.tenant_id},{self.rule},{self.namespace},{self.value})"
        )


@dataclass(frozen=True)
class TenantRules:
    """The rules in force for one tenant."""

    blocked: tuple[str, ...] = ()
    namespace_limits: Mapping[str, int] = field(default_factory=dict)
    max_identities: int | None = None

    @property
    def is_empty(self) -> bool:
        return not self.blocked and not self.namespace_limits and self.max_identities is None

    @property
    def has_limits(self) -> bool:
        return bool(self.namespace_limits) or self.max_identities is not None

    def fingerprint(self) -> str:
        """A short digest of the rules ("" for none): stored on the rows resolved under them, so
        a run sees which tenants' rules changed since their rows were resolved."""
        if self.is_empty:
            return ""
        text = json.dumps(
            [sorted(self.blocked), sorted(self.namespace_limits.items()), self.max_identities]
        )
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _cell(row: Mapping[str, object], column: str) -> str:
    value = row.get(column)
    return "" if value is None else str(value).strip()


def _check_pattern(row: RuleRow) -> None:
    pattern = row.value
    if not pattern:
        raise IdentityRulesError(f"{row.describe()}: a blocked row needs a value (an identity)")
    escape = False
    for character in pattern:
        if escape:
            if character not in "%_\\":
                raise IdentityRulesError(
                    f"{row.describe()}: '\\' must escape %, _ or \\ in a LIKE pattern"
                )
            escape = False
        elif character == "\\":
            escape = True
    if escape:
        raise IdentityRulesError(f"{row.describe()}: the pattern ends with a lone '\\'")
    prefix, colon, _ = pattern.partition(":")
    if not colon and "%" not in pattern:
        raise IdentityRulesError(
            f"{row.describe()}: matches no identity; write namespace:value "
            "(e.g. email:test@example.com) or a pattern with %"
        )
    if colon and not set(prefix) & set("%_\\") and prefix not in identity_namespaces():
        raise IdentityRulesError(
            f"{row.describe()}: unknown namespace '{prefix}' "
            f"(one of {', '.join(identity_namespaces())})"
        )


def check_rule_row(row: RuleRow) -> None:
    """Raise IdentityRulesError, naming the row, when it breaks the table of SPEC.md §5."""
    pattern = tenant_id_pattern()
    if row.tenant_id != ALL_TENANTS and not re.match(pattern, row.tenant_id):
        raise IdentityRulesError(f"{row.describe()}: tenant_id must be * or match {pattern}")
    if row.rule not in RULES:
        raise IdentityRulesError(
            f"{row.describe()}: unknown rule '{row.rule}' (one of {', '.join(RULES)})"
        )
    if row.rule == "namespace_limit":
        if row.namespace not in identity_namespaces():
            raise IdentityRulesError(
                f"{row.describe()}: unknown namespace '{row.namespace}' "
                f"(one of {', '.join(identity_namespaces())})"
            )
    elif row.namespace:
        raise IdentityRulesError(f"{row.describe()}: a {row.rule} row takes no namespace")
    if row.rule == "blocked":
        _check_pattern(row)
    elif not POSITIVE_INTEGER.match(row.value):
        raise IdentityRulesError(f"{row.describe()}: the limit must be a positive integer")


def parse_rule_rows(rows: Iterable[Mapping[str, object]], first_line: int = 2) -> list[RuleRow]:
    """The seed's rows (dicts of its four columns), checked; line numbers count from
    `first_line` (2: the CSV's header is line 1). Two limits for the same tenant and namespace
    (or two max_identities of a tenant) that differ are an error too: which one holds?"""
    parsed = [
        RuleRow(line, *(_cell(row, column) for column in COLUMNS))
        for line, row in enumerate(rows, start=first_line)
    ]
    limits: dict[tuple[str, str, str], RuleRow] = {}
    for row in parsed:
        check_rule_row(row)
        if row.rule == "blocked":
            continue
        key = (row.tenant_id, row.rule, row.namespace)
        other = limits.setdefault(key, row)
        if int(other.value) != int(row.value):
            raise IdentityRulesError(
                f"{row.describe()}: contradicts {other.describe()}; keep one of them"
            )
    return parsed


def read_rules_csv(path: Path) -> list[RuleRow]:
    """The seed's CSV, checked (a missing file: no rules)."""
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [column for column in COLUMNS if column not in (reader.fieldnames or [])]
        if missing:
            raise IdentityRulesError(
                f"identity_rules: the header must name {', '.join(COLUMNS)}; missing "
                f"{', '.join(missing)}"
            )
        return parse_rule_rows(reader)


def tenant_rules(rows: Iterable[RuleRow], tenant_id: str) -> TenantRules:
    """The rules in force for `tenant_id`: its own limits replace the `*` ones; every blocked
    pattern of `*` and of the tenant applies."""
    blocked: set[str] = set()
    defaults: dict[tuple[str, str], int] = {}
    own: dict[tuple[str, str], int] = {}
    for row in rows:
        if row.tenant_id not in (ALL_TENANTS, tenant_id):
            continue
        if row.rule == "blocked":
            blocked.add(row.value)
        else:
            target = defaults if row.tenant_id == ALL_TENANTS else own
            target[(row.rule, row.namespace)] = int(row.value)
    limits = {**defaults, **own}
    return TenantRules(
        blocked=tuple(sorted(blocked)),
        namespace_limits={
            namespace: limit
            for (rule, namespace), limit in sorted(limits.items())
            if rule == "namespace_limit"
        },
        max_identities=limits.get(("max_identities", "")),
    )


def rules_by_tenant(rows: Iterable[RuleRow], tenants: Iterable[str]) -> dict[str, TenantRules]:
    """The tenants that have rules in force, with them (tenants without any are left out)."""
    rows = list(rows)
    found = {tenant: tenant_rules(rows, tenant) for tenant in tenants}
    return {tenant: rules for tenant, rules in found.items() if not rules.is_empty}
