"""The run's tenants as Python models read them from var tenants."""

from __future__ import annotations

import pytest

from profile_lake.tenant_scope import TenantScopeError, parse_tenant_scope


@pytest.mark.parametrize("value", [None, "", "all", " all ", [], "[]"])
def test_every_tenant(value: object) -> None:
    assert parse_tenant_scope(value) is None


@pytest.mark.parametrize(
    ("value", "tenants"),
    [
        ("acme", ("acme",)),
        (["globex", "acme", "acme"], ("acme", "globex")),
        ("['globex', 'acme']", ("acme", "globex")),
        ("globex, acme", ("acme", "globex")),
    ],
)
def test_listed_tenants_sorted_once(value: object, tenants: tuple[str, ...]) -> None:
    assert parse_tenant_scope(value) == tenants


@pytest.mark.parametrize("value", ["ACME", "['a b']", "[1]", "[unclosed", 7, "a;drop"])
def test_anything_else_is_an_error_naming_it(value: object) -> None:
    with pytest.raises(TenantScopeError, match="tenants"):
        parse_tenant_scope(value)
