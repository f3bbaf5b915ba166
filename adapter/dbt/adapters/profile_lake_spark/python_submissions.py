"""The `session` submission method: run a compiled dbt Python model in this process's Spark."""

from __future__ import annotations

from typing import Any

from dbt.adapters.base import PythonJobHelper
from dbt.adapters.profile_lake_spark.session import describe_spark_jobs
from dbt.adapters.spark import SparkCredentials
from dbt_common.exceptions import DbtRuntimeError


class SessionPythonJobHelper(PythonJobHelper):
    """Executes the compiled model code with the SparkSession the SQL models use.

    dbt-spark's session connection creates the session with `SparkSession.builder.getOrCreate()`,
    so `getOrCreate()` here returns that same session: temp views, configs and caches are shared,
    and the model's `ref()`/`source()` calls resolve through `spark.table`.
    """

    def __init__(self, parsed_model: dict[str, Any], credentials: SparkCredentials) -> None:
        self.parsed_model = parsed_model
        self.credentials = credentials
        self.model_name = f"{parsed_model['schema']}.{parsed_model['alias']}"
        self.node_id: str | None = parsed_model.get("unique_id")

    def submit(self, compiled_code: str) -> str:
        from pyspark.sql import DataFrame, SparkSession

        spark = SparkSession.builder.getOrCreate()
        namespace: dict[str, Any] = {
            "spark": spark,
            "pyspark_sql_DataFrame": DataFrame,
            "__name__": "dbt_python_model",
        }
        # dbt-core's create_table_as wrapper indents the first line; a module starts at column 0.
        source = compiled_code.lstrip()
        code = compile(source, f"<dbt python model {self.model_name}>", "exec")
        describe_spark_jobs(self.node_id)  # as the SQL models' statements are (session.py)
        try:
            exec(code, namespace)
        except Exception as error:  # surface the model and the cause, not a bare stack
            raise DbtRuntimeError(
                f"Python model {self.model_name} failed: {type(error).__name__}: {error}"
            ) from error
        return "OK"
