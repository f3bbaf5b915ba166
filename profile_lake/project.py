"""The dbt project's own definitions, for Python code that runs outside a dbt invocation (the
`profile-lake` commands, tests, benchmarks): read from dbt_project.yml, so that a rule such as
the tenant id pattern or the identity namespaces is defined once, there."""

from __future__ import annotations

from functools import cache
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[1]


@cache
def _project_vars() -> dict[str, object]:
    import yaml

    return yaml.safe_load((PROJECT_DIR / "dbt_project.yml").read_text())["vars"]


def project_var(name: str) -> object:
    """A var of dbt_project.yml as dbt gives it: a string is rendered as a Jinja template in
    which `var` is the only function (as `identity_pattern` reads `identity_namespaces`)."""
    value = _project_vars()[name]
    if not isinstance(value, str) or "{{" not in value:
        return value
    import jinja2

    return jinja2.Template(value, undefined=jinja2.StrictUndefined).render(var=project_var)


def tenant_id_pattern() -> str:
    """dbt's var tenant_id_pattern: what a tenant id must match (SPEC.md section 2)."""
    return str(project_var("tenant_id_pattern"))


def identity_namespaces() -> tuple[str, ...]:
    """dbt's var identity_namespaces: the namespaces of an identity (SPEC.md section 2)."""
    namespaces = project_var("identity_namespaces")
    if not isinstance(namespaces, list):
        raise ValueError(f"var identity_namespaces must be a list, not {namespaces!r}")
    return tuple(str(namespace) for namespace in namespaces)
