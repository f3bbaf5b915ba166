"""A throwaway PostgreSQL server for tests: the `shared` target's Hive metastore database.

Debian's server binaries (installed with apt-get when missing) run a fresh cluster in a temp
directory, on a free TCP port of 127.0.0.1 with its unix socket beside the data; `stop()` shuts
it down and deletes everything. PostgreSQL refuses to run as root, so under root the cluster
belongs to the `postgres` OS user the Debian package creates.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import Any

DEBIAN_POSTGRES_ROOT = Path("/usr/lib/postgresql")
SERVER_OS_USER = "postgres"
SUPERUSER = "postgres"
HOST = "127.0.0.1"
START_TIMEOUT_S = 60
# Durability is worthless in a throwaway cluster; fsync and friends only cost time.
FAST_UNSAFE_SETTINGS = ("fsync=off", "synchronous_commit=off", "full_page_writes=off")


class PostgresError(RuntimeError):
    """The server could not be installed, started or set up."""


@dataclass(frozen=True)
class PostgresConnection:
    """How to reach the metastore database of a running server."""

    host: str
    port: int
    database: str
    user: str
    password: str
    socket_dir: Path
    jdbc_parameters: str = ""

    @property
    def jdbc_url(self) -> str:
        url = f"jdbc:postgresql://{self.host}:{self.port}/{self.database}"
        return f"{url}?{self.jdbc_parameters}" if self.jdbc_parameters else url

    def with_application_name(self, name: str) -> PostgresConnection:
        """The same database; the server's pg_stat_activity shows `name` for these clients."""
        return replace(self, jdbc_parameters=f"ApplicationName={name}")

    def query(self, sql: str, parameters: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """Rows of one SQL statement (%s placeholders), as this user (psycopg2: a dev
        dependency)."""
        import psycopg2

        connection = psycopg2.connect(
            host=self.host,
            port=self.port,
            dbname=self.database,
            user=self.user,
            password=self.password,
        )
        try:
            with connection, connection.cursor() as cursor:
                cursor.execute(sql, tuple(parameters))
                return cursor.fetchall() if cursor.description else []
        finally:
            connection.close()

    def metastore_env(self) -> dict[str, str]:
        """The environment variables the `shared` dbt target reads (profiles/profiles.yml)."""
        return {
            "PROFILE_LAKE_METASTORE_URL": self.jdbc_url,
            "PROFILE_LAKE_METASTORE_USER": self.user,
            "PROFILE_LAKE_METASTORE_PASSWORD": self.password,
        }


def newest_bin_dir(root: Path = DEBIAN_POSTGRES_ROOT) -> Path | None:
    """/usr/lib/postgresql/<major>/bin of the newest installed server, if any."""
    bin_dirs = [path.parent for path in root.glob("*/bin/initdb")]
    numbered = [path for path in bin_dirs if path.parent.name.isdigit()]
    return max(numbered, key=lambda path: int(path.parent.name), default=None)


def ensure_server_binaries() -> Path:
    """The server's bin directory, installing Debian's `postgresql` package if it is missing."""
    found = newest_bin_dir()
    if found is not None:
        return found
    if os.geteuid() != 0:
        raise PostgresError("PostgreSQL is not installed; run: apt-get install postgresql")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (
        ["apt-get", "update"],
        ["apt-get", "install", "-y", "--no-install-recommends", "postgresql"],
    ):
        _run(command, env=env)
    found = newest_bin_dir()
    if found is None:
        raise PostgresError(f"postgresql installed, but no initdb under {DEBIAN_POSTGRES_ROOT}")
    return found


def free_port(host: str = HOST) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def _run(
    command: list[str],
    *,
    env: dict[str, str] | None = None,
    as_user: pwd.struct_passwd | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a command to completion (as another OS user if given); fail with its output."""
    identity = (
        {"user": as_user.pw_uid, "group": as_user.pw_gid, "extra_groups": []} if as_user else {}
    )
    result = subprocess.run(
        command, capture_output=True, text=True, check=False, env=env, **identity
    )
    if result.returncode != 0:
        raise PostgresError(
            f"{' '.join(command)} exited {result.returncode}\n{result.stdout}{result.stderr}"
        )
    return result


def _sql_literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _sql_identifier(value: str) -> str:
    return '"' + value.replace('"', '""') + '"'


class ThrowawayPostgres:
    """A PostgreSQL cluster that lives as long as this object is started.

    with ThrowawayPostgres() as connection:
        connection.jdbc_url  # jdbc:postgresql://127.0.0.1:<port>/metastore
    """

    def __init__(
        self,
        database: str = "metastore",
        user: str = "profile_lake",
        password: str | None = None,
        parent_dir: Path | None = None,
    ) -> None:
        self.database = database
        self.user = user
        # distinctive by default, so that a test can look for it where it must not appear
        self.password = password or f"pw-{secrets.token_hex(8)}"
        self.parent_dir = parent_dir
        self.root: Path | None = None
        self.connection: PostgresConnection | None = None
        self._bin_dir: Path | None = None

    @property
    def data_dir(self) -> Path:
        assert self.root is not None, "not started"
        return self.root / "data"

    @property
    def log_file(self) -> Path:
        assert self.root is not None, "not started"
        return self.root / "server.log"

    def start(self) -> PostgresConnection:
        if self.connection is not None:
            return self.connection
        self._bin_dir = ensure_server_binaries()
        self.root = Path(tempfile.mkdtemp(prefix="profile-lake-pg-", dir=self.parent_dir))
        try:
            self._make_owned_by_server_user(self.root)
            self._initdb()
            port = self._start_server()
            self.connection = PostgresConnection(
                HOST, port, self.database, self.user, self.password, self.root
            )
            self._create_user_and_database()
        except BaseException:
            self.stop()
            raise
        return self.connection

    def stop(self) -> None:
        """Shut the server down (fast: no waiting for clients) and delete its files."""
        if self.root is None:
            return
        if (self.data_dir / "postmaster.pid").exists():
            self._as_server_user(
                [self._bin("pg_ctl"), "stop", "-D", str(self.data_dir), "-m", "fast", "-w"]
            )
        shutil.rmtree(self.root, ignore_errors=True)
        self.root = None
        self.connection = None

    def new_database(self, name: str) -> PostgresConnection:
        """Another empty database on this server, owned by the same user: a metastore of its
        own for a test that must not see other tests' schemas."""
        assert self.connection is not None, "not started"
        self._superuser_sql(
            f"create database {_sql_identifier(name)} owner {_sql_identifier(self.user)}"
        )
        return replace(self.connection, database=name)

    def server_log(self) -> str:
        if self.root is None or not self.log_file.exists():
            return ""
        return self.log_file.read_text(errors="replace")

    def __enter__(self) -> PostgresConnection:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    # ---------- plumbing

    def _bin(self, name: str) -> str:
        assert self._bin_dir is not None
        return str(self._bin_dir / name)

    @staticmethod
    def _server_user() -> pwd.struct_passwd | None:
        """The OS user the server runs as: `postgres` under root (which the server refuses),
        else whoever we are."""
        return pwd.getpwnam(SERVER_OS_USER) if os.geteuid() == 0 else None

    def _make_owned_by_server_user(self, path: Path) -> None:
        user = self._server_user()
        if user is not None:
            os.chown(path, user.pw_uid, user.pw_gid)

    def _as_server_user(self, command: list[str]) -> subprocess.CompletedProcess[str]:
        user = self._server_user()
        if user is None:
            return _run(command)
        # HOME: the postgres user cannot read root's, and psql looks there for its rc file.
        env = {**os.environ, "HOME": user.pw_dir, "PGPASSFILE": os.devnull}
        return _run(command, env=env, as_user=user)

    def _initdb(self) -> None:
        self._as_server_user(
            [
                self._bin("initdb"),
                "--pgdata",
                str(self.data_dir),
                "--username",
                SUPERUSER,
                "--encoding",
                "UTF8",
                "--locale",
                "C",
                # The superuser connects over the socket in our own directory only; everyone
                # else by TCP with a password, like a real metastore client.
                "--auth-local",
                "trust",
                "--auth-host",
                "scram-sha-256",
                "--no-sync",
            ]
        )

    def _start_server(self) -> int:
        port = free_port()
        options = [
            f"-p {port}",
            f"-k {self.root}",
            f"-c listen_addresses={HOST}",
            *(f"-c {setting}" for setting in FAST_UNSAFE_SETTINGS),
        ]
        try:
            self._as_server_user(
                [
                    self._bin("pg_ctl"),
                    "start",
                    "-D",
                    str(self.data_dir),
                    "-l",
                    str(self.log_file),
                    "-o",
                    " ".join(options),
                    "-w",
                    "-t",
                    str(START_TIMEOUT_S),
                ]
            )
        except PostgresError as error:
            raise PostgresError(f"{error}\n{self.server_log()[-3000:]}") from error
        return port

    def _create_user_and_database(self) -> None:
        user = _sql_identifier(self.user)
        self._superuser_sql(f"create role {user} login password {_sql_literal(self.password)}")
        self._superuser_sql(f"create database {_sql_identifier(self.database)} owner {user}")

    def _superuser_sql(self, statement: str) -> None:
        assert self.connection is not None, "not started"
        self._as_server_user(
            [
                self._bin("psql"),
                "--no-psqlrc",
                "--quiet",
                "--set",
                "ON_ERROR_STOP=1",
                "--host",
                str(self.connection.socket_dir),
                "--port",
                str(self.connection.port),
                "--username",
                SUPERUSER,
                "--dbname",
                "postgres",
                "--command",
                statement,
            ]
        )
