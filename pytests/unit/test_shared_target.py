"""The `shared` target's settings as the adapter hands them to Spark (no Spark started): the
PostgreSQL metastore from the environment, the JDBC driver on the driver JVM's classpath, the
password in a private hive-site.xml instead, and nothing of the local target's Derby."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from xml.etree import ElementTree

import pytest
from dbt.adapters.profile_lake_spark.connections import private_hive_conf_dir

from profile_lake.spark.session import session_settings
from pytests.support.dbt_runner import environment
from pytests.support.postgres import PostgresConnection, newest_bin_dir

METASTORE = {
    "PROFILE_LAKE_METASTORE_URL": "jdbc:postgresql://db.example:5433/lake_meta",
    "PROFILE_LAKE_METASTORE_USER": "meta_user",
    "PROFILE_LAKE_METASTORE_PASSWORD": "s3cret",
}


@pytest.fixture
def shared() -> dict[str, str]:
    with environment({**METASTORE, "PROFILE_LAKE_HOME": "/lakes/one"}):
        return session_settings("shared")


def test_metastore_is_the_postgres_database_of_the_environment(shared) -> None:
    assert (
        shared["spark.hadoop.javax.jdo.option.ConnectionURL"]
        == METASTORE["PROFILE_LAKE_METASTORE_URL"]
    )
    assert shared["spark.hadoop.javax.jdo.option.ConnectionDriverName"] == "org.postgresql.Driver"
    assert shared["spark.hadoop.javax.jdo.option.ConnectionUserName"] == "meta_user"
    assert "spark.hadoop.javax.jdo.option.ConnectionPassword" not in shared
    assert "s3cret" not in "".join(shared.values())
    assert shared["spark.hadoop.datanucleus.schema.autoCreateAll"] == "true"


def test_session_is_the_local_one_with_the_lake_home(shared) -> None:
    with environment({**METASTORE, "PROFILE_LAKE_HOME": "/lakes/one"}):
        local = session_settings("local")
    assert shared["spark.master"] == local["spark.master"] == "local[2]"
    assert shared["spark.sql.warehouse.dir"] == "/lakes/one/warehouse"
    assert shared["spark.sql.extensions"] == local["spark.sql.extensions"]


def test_no_derby_and_the_jdbc_driver_on_the_driver_classpath(shared) -> None:
    assert "derby" not in shared["spark.driver.extraJavaOptions"]
    assert "-Xss16m" in shared["spark.driver.extraJavaOptions"]
    hive_conf, driver = shared["spark.driver.extraClassPath"].split(os.pathsep)
    assert Path(driver).name.startswith("postgresql-"), driver
    assert Path(driver).exists()
    assert _hive_site_password(Path(hive_conf)) == "s3cret"


def test_overrides_and_extra_jars_come_after_the_profiles_own() -> None:
    settings = session_settings("local", ["/opt/extra.jar"], **{"spark.app.name": "bench"})
    jars = settings["spark.jars"].split(",")
    assert jars[-1] == "/opt/extra.jar"
    assert any(Path(jar).name.startswith("delta-spark") for jar in jars[:-1]), jars
    assert settings["spark.app.name"] == "bench"


def _hive_site_password(folder: Path) -> str | None:
    site = ElementTree.parse(folder / "hive-site.xml").getroot()
    return site.findtext("property[name='javax.jdo.option.ConnectionPassword']/value")


def test_the_password_file_is_private_and_escaped() -> None:
    password = "a<b&c>'d\"e"
    folder = private_hive_conf_dir(password)
    assert _hive_site_password(folder) == password
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "hive-site.xml").stat().st_mode) == 0o600


def test_jdbc_url_and_environment_of_a_connection() -> None:
    connection = PostgresConnection(
        "127.0.0.1", 5499, "metastore", "u", "p", Path("/tmp/pg")
    ).with_application_name("reader")
    assert (
        connection.jdbc_url == "jdbc:postgresql://127.0.0.1:5499/metastore?ApplicationName=reader"
    )
    assert connection.metastore_env() == {
        "PROFILE_LAKE_METASTORE_URL": connection.jdbc_url,
        "PROFILE_LAKE_METASTORE_USER": "u",
        "PROFILE_LAKE_METASTORE_PASSWORD": "p",
    }


def test_newest_installed_server_is_found(tmp_path: Path) -> None:
    for version in ("9", "15", "13"):
        (tmp_path / version / "bin").mkdir(parents=True)
        (tmp_path / version / "bin" / "initdb").touch()
    assert newest_bin_dir(tmp_path) == tmp_path / "15" / "bin"
    assert newest_bin_dir(tmp_path / "none") is None


@pytest.mark.parametrize("target", ["local", "shared"])
def test_extra_jvm_options_reach_the_driver_after_the_profiles_own(target: str) -> None:
    flags = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=512m"
    with environment({**METASTORE, "PROFILE_LAKE_JVM_OPTIONS": flags}):
        options = session_settings(target)["spark.driver.extraJavaOptions"]
    assert options.startswith(("-Xss16m", "-Dderby")) and flags in options
    # code generation on (a large lake's choice): the profile adds no JVM flag of its own
    with environment({**METASTORE, "PROFILE_LAKE_JVM_OPTIONS": "", "PROFILE_LAKE_CODEGEN": "true"}):
        assert "XX:" not in session_settings(target)["spark.driver.extraJavaOptions"]


def test_the_tests_dbt_subprocesses_run_c1_only_unless_told_otherwise(tmp_path: Path) -> None:
    from pytests.support.dbt_subprocess import DbtSubprocess
    from pytests.support.jvm import TEST_JVM_OPTIONS

    with environment({"PROFILE_LAKE_JVM_OPTIONS": ""}):
        os.environ.pop("PROFILE_LAKE_JVM_OPTIONS")
        assert DbtSubprocess(tmp_path).environment()["PROFILE_LAKE_JVM_OPTIONS"] == (
            TEST_JVM_OPTIONS
        )
    with environment({"PROFILE_LAKE_JVM_OPTIONS": "-Xint"}):
        assert DbtSubprocess(tmp_path).environment()["PROFILE_LAKE_JVM_OPTIONS"] == "-Xint"
