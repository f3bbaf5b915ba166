"""The committed profile (profiles/profiles.yml), rendered the way dbt renders it."""

from __future__ import annotations

import os
from typing import Any

import yaml
from jinja2 import Environment, StrictUndefined

from profile_lake.testing.dbt_runner import PROFILES_DIR

_MISSING = object()


def _env_var(name: str, default: Any = _MISSING) -> str:
    if name in os.environ:
        return os.environ[name]
    if default is _MISSING:
        raise KeyError(f"profiles.yml needs the environment variable {name}")
    return str(default)


def _render(value: Any, jinja: Environment) -> Any:
    if isinstance(value, str) and "{{" in value:
        return jinja.from_string(value).render(env_var=_env_var)
    if isinstance(value, dict):
        return {key: _render(item, jinja) for key, item in value.items()}
    if isinstance(value, list):
        return [_render(item, jinja) for item in value]
    return value


def profile_target(target: str = "local") -> dict[str, Any]:
    """One output of the committed profile, with its env_var() calls rendered."""
    profiles = yaml.safe_load((PROFILES_DIR / "profiles.yml").read_text())
    output = profiles["profile_lake"]["outputs"][target]
    return _render(output, Environment(undefined=StrictUndefined))
