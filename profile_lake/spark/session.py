"""The project's SparkSession outside a dbt invocation (`profile-lake migrate`, the benchmarks),
built exactly as dbt's session connection builds it.

One path sets a session up: the committed profile (profiles/profiles.yml) holds the Spark
settings (Delta, warehouse, metastore), the adapter's credentials class adds the jars, the
driver's classpath, the log settings and the Python workers' interpreter, and the session is
built as dbt-spark's session connection builds it (Hive support, then each setting).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from profile_lake.project import PROJECT_DIR

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PROFILES_DIR = PROJECT_DIR / "profiles"

_MISSING = object()


def _env_var(name: str, default: Any = _MISSING) -> str:
    if name in os.environ:
        return os.environ[name]
    if default is _MISSING:
        raise KeyError(f"profiles.yml needs the environment variable {name}")
    return str(default)


def _render(value: Any, jinja: Any) -> Any:
    if isinstance(value, str) and "{{" in value:
        return jinja.from_string(value).render(env_var=_env_var)
    if isinstance(value, dict):
        return {key: _render(item, jinja) for key, item in value.items()}
    if isinstance(value, list):
        return [_render(item, jinja) for item in value]
    return value


def profile_target(target: str = "local") -> dict[str, Any]:
    """One output of the committed profile, with its env_var() calls rendered."""
    import yaml
    from jinja2 import Environment, StrictUndefined

    profiles = yaml.safe_load((PROFILES_DIR / "profiles.yml").read_text())
    output = profiles["profile_lake"]["outputs"][target]
    return _render(output, Environment(undefined=StrictUndefined))


def session_settings(
    target: str = "local", extra_jars: Iterable[str] = (), **overrides: str
) -> dict[str, str]:
    """The Spark settings of a session of the profile's `target`, as dbt's connection gets
    them from the adapter: the profile's, then `overrides`, with `extra_jars` after the
    project's jars."""
    from dbt.adapters.profile_lake_spark.connections import ProfileLakeSparkCredentials

    output = profile_target(target)
    output["server_side_parameters"].update(overrides)
    fields = {key: value for key, value in output.items() if key not in ("type", "threads")}
    settings = dict(ProfileLakeSparkCredentials.from_dict(fields).server_side_parameters)
    if extra_jars:
        settings["spark.jars"] = ",".join([settings["spark.jars"], *extra_jars])
    return settings


def profile_session(
    target: str = "local", extra_jars: Iterable[str] = (), **overrides: str
) -> SparkSession:
    """The process's SparkSession with `session_settings(target, extra_jars, **overrides)`
    (if the process has one already, Spark keeps its static settings, as for dbt). On an
    embedded Derby metastore the process holds the lake first (profile_lake.locks.
    process_lock): LakeBusyError when another process does."""
    from pyspark.sql import SparkSession

    from profile_lake.locks.process_lock import hold_session_lake

    settings = session_settings(target, extra_jars, **overrides)
    hold_session_lake(settings, progress=print)
    builder = SparkSession.builder.enableHiveSupport()
    for key, value in settings.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
