"""Credentials and connection manager: dbt-spark's, under this adapter's own type name."""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from dbt.adapters.contracts.connection import Connection
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.connections import (
    SparkConnectionManager,
    SparkConnectionMethod,
    SparkCredentials,
)
from dbt_common.exceptions import DbtRuntimeError

ADAPTER_TYPE = "profile_lake_spark"
logger = AdapterLogger("ProfileLake")
JARS_DIR_ENV = "PROFILE_LAKE_JARS_DIR"
DRIVER_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
# adapter/dbt/adapters/profile_lake_spark/connections.py -> the repository root
_REPO_ROOT = Path(__file__).resolve().parents[4]
LOG4J_CONFIG = (
    _REPO_ROOT / "adapter" / "dbt" / "include" / "profile_lake_spark" / "log4j2.properties"
)


def default_jars_dir() -> Path:
    """Where `make setup` copies the Delta jars fetched from Maven Central."""
    return Path(os.environ.get(JARS_DIR_ENV) or _REPO_ROOT / ".cache" / "jars")


def jar_paths(jars_dir: Path) -> list[str]:
    jars = sorted(glob.glob(str(jars_dir / "*.jar")))
    if not jars:
        raise DbtRuntimeError(
            f"No Delta jars in {jars_dir}. Run `make setup` once (it fetches them from "
            f"Maven Central), or point {JARS_DIR_ENV} or the profile's `jars_dir` at them."
        )
    return jars


# JDBC drivers among those jars (the `shared` target's PostgreSQL metastore). They also go on
# the driver JVM's own classpath: the metastore's connection pool asks java.sql.DriverManager,
# which ignores drivers that only spark.jars' class loader sees ("No suitable driver").
JDBC_DRIVER_JARS = "postgresql-*.jar"


def jdbc_driver_paths(jars_dir: Path) -> list[str]:
    return sorted(glob.glob(str(jars_dir / JDBC_DRIVER_JARS)))


METASTORE_PASSWORD_KEY = "spark.hadoop.javax.jdo.option.ConnectionPassword"


def private_hive_conf_dir(password: str) -> Path:
    """A folder only this user can read, holding a hive-site.xml with the metastore password.

    On the driver's classpath it gives Spark's Hive client the password without a `--conf`,
    which pyspark would put on the JVM's command line, where `ps` shows it to every user of
    the host. The folder is removed when this process exits.
    """
    folder = Path(tempfile.mkdtemp(prefix="profile-lake-hive-conf-"))  # mode 0700
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    site = folder / "hive-site.xml"
    site.touch(mode=0o600)
    site.write_text(
        "<configuration><property><name>javax.jdo.option.ConnectionPassword</name>"
        f"<value>{escape(password)}</value></property></configuration>\n"
    )
    return folder


@dataclass
class ProfileLakeSparkCredentials(SparkCredentials):
    # Folder of extra JVM jars (Delta, JDBC drivers) for the session; default: the set-up cache.
    jars_dir: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.method != SparkConnectionMethod.SESSION:
            return
        params = self.server_side_parameters
        jars_dir = Path(self.jars_dir) if self.jars_dir else default_jars_dir()
        if "spark.jars" not in params:
            params["spark.jars"] = ",".join(jar_paths(jars_dir))
        drivers = jdbc_driver_paths(jars_dir)
        metastore_url = params.get("spark.hadoop.javax.jdo.option.ConnectionURL", "")
        if metastore_url.startswith("jdbc:postgresql:") and not drivers:
            raise DbtRuntimeError(
                f"No PostgreSQL JDBC driver ({JDBC_DRIVER_JARS}) in {jars_dir} for the "
                "metastore. Run `make setup` (it fetches it with the Delta jars)."
            )
        # Spark reads hive-site.xml from the classpath; the password goes there, not to argv.
        password = params.pop(METASTORE_PASSWORD_KEY, "")
        hive_conf = [str(private_hive_conf_dir(password))] if password else []
        own_classpath = params.get("spark.driver.extraClassPath")
        classpath = [*hive_conf, *([own_classpath] if own_classpath else drivers)]
        if classpath:
            params["spark.driver.extraClassPath"] = os.pathsep.join(classpath)
        java_options = params.get(DRIVER_JAVA_OPTIONS, "")
        if "log4j2.configurationFile" not in java_options:
            params[DRIVER_JAVA_OPTIONS] = (
                f"{java_options} -Dlog4j2.configurationFile={LOG4J_CONFIG}".strip()
            )
        params.update(run_session_sizing(params))
        # Python workers (UDFs, mapInArrow) run with dbt's own interpreter, which has the
        # project's packages; pyspark reads this from the environment, not from the conf.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    @property
    def type(self) -> str:
        return ADAPTER_TYPE


def run_session_sizing(params: dict[str, str]) -> dict[str, str]:
    """The Spark settings this run's session takes by the lake's size: code generation, the
    driver JVM's compilers (fixed when the JVM starts) and task counts (profile_lake.
    lake_size). dbt resets its adapter at each invocation and dbt-spark applies the settings at
    each statement, so a watcher's runs follow the lake as it grows."""
    from profile_lake.lake_size import session_sizing
    from profile_lake.techniques import CodeGenerationError, TaskPartitionsError

    try:
        code_generation, partitions = session_sizing(params)
    except (CodeGenerationError, TaskPartitionsError) as error:
        raise DbtRuntimeError(str(error)) from None
    logger.debug(
        f"code generation {'on' if code_generation.on else 'off'}: {code_generation.reason}"
    )
    logger.debug(f"task partitions {partitions.counts}: {partitions.reason}")
    java_options = params.get(DRIVER_JAVA_OPTIONS, "")
    return {
        **code_generation.spark_settings(),
        **partitions.spark_settings(),
        DRIVER_JAVA_OPTIONS: code_generation.driver_java_options(java_options),
    }


def hold_session_lake(settings: dict[str, str]) -> None:
    """Before this process's SparkSession starts: on an embedded Derby metastore, hold the
    lake for the rest of the process (profile_lake.locks.process_lock). Another process
    holding it stops this one with one message naming it (or after PROFILE_LAKE_WAIT_FOR_LAKE
    seconds of waiting for it), before the JVM starts."""
    from profile_lake.locks.process_lock import LakeBusyError, WaitSettingError, hold_session_lake

    try:
        hold_session_lake(settings, progress=logger.info)
    except (LakeBusyError, WaitSettingError) as error:
        raise DbtRuntimeError(str(error)) from None


class ProfileLakeSparkConnectionManager(SparkConnectionManager):
    TYPE = ADAPTER_TYPE

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        """dbt-spark's connection; on the session method, the lake held first (one process at
        a time on embedded Derby), and seed values become real literals (NULL, escaped
        strings, exact numbers): see session.py."""
        if connection.credentials.method == SparkConnectionMethod.SESSION:
            hold_session_lake(connection.credentials.server_side_parameters)
        connection = super().open(connection)
        if connection.credentials.method == SparkConnectionMethod.SESSION:
            from dbt.adapters.profile_lake_spark.session import (
                ProfileLakeSessionConnectionWrapper,
            )

            if not isinstance(connection.handle, ProfileLakeSessionConnectionWrapper):
                connection.handle = ProfileLakeSessionConnectionWrapper(connection.handle.handle)
        return connection
