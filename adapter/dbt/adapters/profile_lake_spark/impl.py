"""The adapter: dbt-spark's, with Python models submitted to the running session by default."""

from __future__ import annotations

from dbt.adapters.__about__ import version as base_adapter_version
from dbt.adapters.base import PythonJobHelper, available
from dbt.adapters.base.relation import AdapterTrackingRelationInfo
from dbt.adapters.contracts.relation import RelationConfig
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.profile_lake_spark.__version__ import version as adapter_version
from dbt.adapters.profile_lake_spark.connections import (
    ADAPTER_TYPE,
    ProfileLakeSparkConnectionManager,
)
from dbt.adapters.profile_lake_spark.python_submissions import SessionPythonJobHelper
from dbt.adapters.spark.impl import SparkAdapter

logger = AdapterLogger("ProfileLake")


class ProfileLakeSparkAdapter(SparkAdapter):
    ConnectionManager = ProfileLakeSparkConnectionManager

    @property
    def default_python_submission_method(self) -> str:
        return "session"

    @property
    def python_submission_helpers(self) -> dict[str, type[PythonJobHelper]]:
        return {**super().python_submission_helpers, "session": SessionPythonJobHelper}

    @classmethod
    def get_adapter_run_info(cls, config: RelationConfig) -> AdapterTrackingRelationInfo:
        # dbt guesses the module from the class name ("profilelakespark"); name it outright.
        return AdapterTrackingRelationInfo(
            adapter_name=ADAPTER_TYPE,
            base_adapter_version=base_adapter_version,
            adapter_version=adapter_version,
            model_adapter_details=cls._get_adapter_specific_run_info(config),
        )

    @available
    def ingest_landing(
        self,
        landing_path: str,
        schema: str,
        checkpoint_dir: str,
        max_files_per_batch: int,
        full_refresh: bool = False,
    ) -> list[str]:
        """Stage new landing files exactly once (see profile_lake.ingest.staging)."""
        from pyspark.sql import SparkSession

        from profile_lake.ingest.staging import IngestSettings, ingest_landing, reset

        self.execute("select 1")  # make sure the connection's SparkSession exists
        spark = SparkSession.builder.getOrCreate()
        settings = IngestSettings(landing_path, schema, checkpoint_dir, int(max_files_per_batch))
        if full_refresh:
            logger.info(f"ingest: full refresh, dropping staging tables in {schema}")
            reset(spark, settings)
        reports = ingest_landing(spark, settings, progress=logger.info)
        return [report.describe() for report in reports]

    @available
    def sql_analysis(self, sql: str) -> dict:
        """Parse and analyse a query without running it: its error, or its column types.

        Returns {"error": message or None, "columns": [[name, type], ...]}; lets macros check
        user-written SQL (segment expressions) and report which one is broken instead of
        failing the run with a Spark stack trace.
        """
        from pyspark.sql import SparkSession

        self.execute("select 1")  # make sure the connection's SparkSession exists
        spark = SparkSession.builder.getOrCreate()
        try:
            schema = spark.sql(sql).schema  # analysed eagerly, not executed
        except Exception as error:  # parse and analysis errors alike
            return {"error": str(error).strip().splitlines()[0], "columns": []}
        return {
            "error": None,
            "columns": [[field.name, field.dataType.simpleString()] for field in schema.fields],
        }
