"""The run's tenants, from var tenants, as the adapter (for macros) and Python models read it."""

from __future__ import annotations

import hashlib

import pytest

from profile_lake.project import project_var
from profile_lake.tenant_scope import (
    TenantScopeError,
    parse_tenant_scope,
    run_tenant_scope,
    tenant_scope_suffix,
)

PATTERN = str(project_var("tenant_id_pattern"))


@pytest.mark.parametrize("value", [None, "", "all", " all ", [], "[]"])
def test_every_tenant(value: object) -> None:
    assert parse_tenant_scope(value, PATTERN) is None


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
    assert parse_tenant_scope(value, PATTERN) == tenants


@pytest.mark.parametrize("value", ["ACME", "['a b']", "[1]", "[unclosed", 7, "a;drop"])
def test_anything_else_is_an_error_naming_it(value: object) -> None:
    with pytest.raises(TenantScopeError, match="tenants"):
        parse_tenant_scope(value, PATTERN)


def test_the_pattern_is_the_callers() -> None:
    assert parse_tenant_scope("ACME", "^[A-Z]+$") == ("ACME",)
    with pytest.raises(TenantScopeError, match="var tenant_id_pattern"):
        parse_tenant_scope("acme", "^[A-Z]+$")


def test_a_full_refresh_takes_every_tenant_only() -> None:
    assert run_tenant_scope("all", PATTERN, full_refresh=True) is None
    assert run_tenant_scope(["b", "a"], PATTERN, full_refresh=False) == ("a", "b")
    with pytest.raises(TenantScopeError, match=r"cannot be limited to var tenants \(a, b\)"):
        run_tenant_scope(["b", "a"], PATTERN, full_refresh=True)


def test_scope_suffix_names_the_tenants() -> None:
    assert tenant_scope_suffix(None) == ""
    assert tenant_scope_suffix(("acme", "globex")) == (
        "_" + hashlib.md5(b"acme,globex").hexdigest()[:12]
    )
    assert tenant_scope_suffix(("acme",)) != tenant_scope_suffix(("globex",))
