"""A SparkSession with exactly the committed profile's settings, outside dbt (benchmarks).

The settings pass through the adapter's own credentials class, so the session gets the same
Delta jars, log settings and Python worker interpreter as a dbt run.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from profile_lake.testing.profile import profile_target


def profile_session(target: str = "local", **overrides: str) -> SparkSession:
    from dbt.adapters.profile_lake_spark.connections import ProfileLakeSparkCredentials

    output = profile_target(target)
    output["server_side_parameters"].update(overrides)
    fields = {key: value for key, value in output.items() if key not in ("type", "threads")}
    credentials = ProfileLakeSparkCredentials.from_dict(fields)
    builder = SparkSession.builder.enableHiveSupport()
    for key, value in credentials.server_side_parameters.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
