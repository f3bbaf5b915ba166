"""The dbt project's own definitions, for Python code that runs outside a dbt invocation (the
`profile-lake` commands, tests, benchmarks): read from dbt_project.yml, so that a rule such as
the tenant id pattern is defined once, there."""

from __future__ import annotations

from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[1]


def project_var(name: str) -> object:
    """A var of dbt_project.yml as written there."""
    import yaml

    return yaml.safe_load((PROJECT_DIR / "dbt_project.yml").read_text())["vars"][name]


def tenant_id_pattern() -> str:
    """dbt's var tenant_id_pattern: what a tenant id must match (SPEC.md section 2)."""
    return str(project_var("tenant_id_pattern"))
