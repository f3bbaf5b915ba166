"""The tenants a run processes (dbt var `tenants`), as Python models receive it.

SQL models call the `run_tenant_scope` macro; Python models cannot call macros, so their YAML
passes the var through `config.meta.tenant_scope`, where dbt may render a list as its text.
"""

from __future__ import annotations

import ast
import re

TENANT_ID = re.compile(r"^[a-z0-9_]{1,64}$")
EVERY_TENANT = "all"


class TenantScopeError(ValueError):
    """The var `tenants` is neither 'all' nor a list of tenant ids."""


def parse_tenant_scope(value: object) -> tuple[str, ...] | None:
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
    for tenant in tenants:
        if not isinstance(tenant, str) or not TENANT_ID.match(tenant):
            raise TenantScopeError(f"var tenants: {tenant!r} is not a tenant id")
    return tuple(tenants)
