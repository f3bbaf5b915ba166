"""dbt adapter `profile_lake_spark`: dbt-spark plus Python models run in the local SparkSession.

dbt-spark submits Python models only to Databricks clusters. This plugin extends its adapter
(so every `spark__` macro still dispatches) with a `session` submission method that executes
the compiled model code in the SparkSession the SQL models use.
"""

from dbt.adapters.base import AdapterPlugin
from dbt.adapters.profile_lake_spark.connections import (
    ProfileLakeSparkConnectionManager,
    ProfileLakeSparkCredentials,
)
from dbt.adapters.profile_lake_spark.impl import ProfileLakeSparkAdapter
from dbt.include import profile_lake_spark

Plugin = AdapterPlugin(
    adapter=ProfileLakeSparkAdapter,  # type: ignore[arg-type]
    credentials=ProfileLakeSparkCredentials,
    include_path=profile_lake_spark.PACKAGE_PATH,
    dependencies=["spark"],
)

__all__ = [
    "Plugin",
    "ProfileLakeSparkAdapter",
    "ProfileLakeSparkConnectionManager",
    "ProfileLakeSparkCredentials",
]
