"""The tenants a run processes (dbt var `tenants`), for macros (through the adapter) and for
Python models (through their `config.meta`, where dbt may render a list as its text).

The tenant id pattern is dbt's var `tenant_id_pattern` (dbt_project.yml), passed in by the
caller: it is defined once, for the landing rules and for this.
"""

from __future__ import annotations

import ast
import hashlib
import re

EVERY_TENANT = "all"


class TenantScopeError(ValueError):
    """The var `tenants` is neither 'all' nor a list of tenant ids, or cannot apply to this run."""


def parse_tenant_scope(value: object, tenant_id_pattern: str) -> tuple[str, ...] | None:
    """The run's tenants, sorted; None for every tenant ('all', empty or unset)."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if text in ("", EVERY_TENANT):
            return None
        if text.startswith("["):
            try:
                value = ast.literal_eval(text)
            except (ValueError, SyntaxError) as error:
                raise TenantScopeError(f"var tenants: cannot read {text!r} as a list") from error
        else:
            value = [part.strip() for part in text.split(",")]
    if not isinstance(value, list | tuple):
        raise TenantScopeError(f"var tenants must be 'all' or a list of tenant ids, got {value!r}")
    tenants = sorted(set(value))
    if not tenants:
        return None
    tenant_id = re.compile(tenant_id_pattern)
    for tenant in tenants:
        if not isinstance(tenant, str) or not tenant_id.match(tenant):
            raise TenantScopeError(
                f"var tenants must be 'all' or a list of tenant ids; {tenant!r} is not a tenant "
                f"id (var tenant_id_pattern: {tenant_id_pattern})"
            )
    return tuple(tenants)


def run_tenant_scope(
    value: object, tenant_id_pattern: str, full_refresh: bool
) -> tuple[str, ...] | None:
    """The tenants of a dbt run (None: every tenant). A full refresh rebuilds every tenant's
    rows, so it cannot be limited to some."""
    tenants = parse_tenant_scope(value, tenant_id_pattern)
    if tenants is not None and full_refresh:
        raise TenantScopeError(
            "--full-refresh rebuilds every tenant's rows, so it cannot be limited to var tenants "
            f"({', '.join(tenants)}): the other tenants' rows would be lost. Run it without var "
            "tenants."
        )
    return tenants


def tenant_scope_suffix(tenants: tuple[str, ...] | list[str] | None) -> str:
    """A name suffix for what a run writes outside the tables it shares (the identity graph's
    checkpoints): empty for every tenant, else `_` and a hash of its tenants."""
    if tenants is None:
        return ""
    return "_" + hashlib.md5(",".join(tenants).encode()).hexdigest()[:12]
