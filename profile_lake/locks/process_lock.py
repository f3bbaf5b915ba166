"""One process at a time on a lake whose metastore is embedded Derby.

Embedded Derby admits one JVM per database: a second process on the same lake (a `dbt build`
beside `profile-lake watch`) used to die a minute into its start, in Derby's and Hive's stack
traces. Every process that starts a SparkSession on such a metastore first takes an exclusive
`flock` on `<lake>/.process.lock` (the lake: the folder holding `metastore_db`), before the
session starts, and keeps it for its whole life: the kernel releases it when the process ends,
however it ends. The holder writes who it is into the file (pid, command, start), so a second
process fails at once with one message naming it, or waits for it when asked to
(PROFILE_LAKE_WAIT_FOR_LAKE, seconds). A metastore that is not Derby (the `shared` target's
PostgreSQL) admits several processes: no lock.

The adapter takes the lock when dbt opens a connection (dbt/adapters/profile_lake_spark/
connections.py); profile_lake.spark.session when the project's own commands build a session.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from profile_lake.locks.process import process_started

LOCK_FILE = ".process.lock"
WAIT_ENV = "PROFILE_LAKE_WAIT_FOR_LAKE"
METASTORE_URL_KEY = "spark.hadoop.javax.jdo.option.ConnectionURL"
POLL_SECONDS = 1.0
COMMAND_MAX_CHARS = 300

Progress = Callable[[str], None]


class LakeBusyError(RuntimeError):
    """Another process holds the lake (past the time this one may wait)."""


class WaitSettingError(ValueError):
    """PROFILE_LAKE_WAIT_FOR_LAKE is not a number of seconds."""


@dataclass(frozen=True)
class ProcessHolder:
    """The process holding a lake, as it wrote itself into the lock file."""

    pid: int
    command: str
    host: str
    started_at: str  # ISO 8601, UTC
    process_started: str = ""  # /proc start time: tells a reused pid apart

    def describe(self) -> str:
        return f"pid {self.pid} ({self.command}) on {self.host}, holding it since {self.started_at}"


def derby_lake(settings: Mapping[str, str]) -> Path | None:
    """The lake folder of a session whose metastore is embedded Derby (the folder holding its
    database, `<PROFILE_LAKE_HOME>/metastore_db`), None for any other metastore, or for a
    session whose catalog is in memory (no metastore: the benchmarks').

    Derby URLs: `jdbc:derby:;databaseName=<path>;create=true` or `jdbc:derby:<path>;...`."""
    url = str(settings.get(METASTORE_URL_KEY, ""))
    in_memory = settings.get("spark.sql.catalogImplementation") == "in-memory"
    if in_memory or not url.startswith("jdbc:derby:"):
        return None
    parts = url.removeprefix("jdbc:derby:").split(";")
    database = parts[0]
    for part in parts[1:]:
        name, _, value = part.partition("=")
        if name.strip() == "databaseName":
            database = value
    if not database or database.startswith("memory:"):
        return None  # an in-memory metastore lives and dies with its process
    return Path(database).absolute().parent


def wait_seconds(value: str | None) -> float:
    """PROFILE_LAKE_WAIT_FOR_LAKE as seconds to wait for the holder (unset or empty: 0, fail
    at once; `inf`: wait as long as it takes)."""
    if value is None or not value.strip():
        return 0.0
    try:
        seconds = float(value)
    except ValueError:
        raise WaitSettingError(
            f"{WAIT_ENV} must be a number of seconds to wait for the process holding the lake "
            f"(or inf), got {value!r}"
        ) from None
    if seconds != seconds or seconds < 0:  # NaN or negative
        raise WaitSettingError(f"{WAIT_ENV} must be 0 or more seconds, got {value!r}")
    return seconds


def should_wait(waited: float, allowed: float) -> bool:
    """Whether a process that has waited `waited` seconds for a busy lake keeps waiting."""
    return waited < allowed


def describe_command(argv: Sequence[str]) -> str:
    """A process's command as a person typed it: the program's name (not its path), its
    arguments; `python -m profile_lake.cli` is `profile-lake`."""
    if not argv:
        return "python"
    program = Path(argv[0])
    if argv[0] in ("-c", ""):
        name = "python -c"
    elif program.name == "cli.py" and program.parent.name == "profile_lake":
        name = "profile-lake"
    elif program.name == "__main__.py":
        name = f"python -m {program.parent.name}"
    else:
        name = program.name
    command = " ".join([name, *argv[1:]])
    if len(command) > COMMAND_MAX_CHARS:
        command = command[: COMMAND_MAX_CHARS - 1] + "…"
    return command


def holder_text(holder: ProcessHolder) -> str:
    return json.dumps(asdict(holder), sort_keys=True) + "\n"


def parse_holder(text: str) -> ProcessHolder | None:
    """The holder a lock file names; None when it names none (empty, being written, foreign)."""
    try:
        fields = json.loads(text)
        return ProcessHolder(
            pid=int(fields["pid"]),
            command=str(fields["command"]),
            host=str(fields["host"]),
            started_at=str(fields["started_at"]),
            process_started=str(fields.get("process_started", "")),
        )
    except (ValueError, KeyError, TypeError):
        return None


def busy_message(lake: Path, holder: ProcessHolder | None, waited: float, allowed: float) -> str:
    """The one message of a process that finds the lake held: who holds it, what to do."""
    who = holder.describe() if holder else "another process (it has not written who it is yet)"
    stop = (
        f"Stop it first (`kill {holder.pid}`: profile-lake watch then ends after its run in flight)"
        if holder
        else "Stop it first"
    )
    waited_text = (
        f" This process waited {waited:.1f} s for it ({WAIT_ENV}={allowed:g})." if allowed else ""
    )
    return (
        f"The lake {lake} is in use by {who}. Its metastore is embedded Derby, which admits "
        f"one process at a time, so this process stops here, before starting Spark.{waited_text} "
        f"{stop}, or set {WAIT_ENV}=<seconds> to wait for it, or use the `shared` target "
        "(a PostgreSQL metastore, docs/targets.md) to run several processes on one lake."
    )


def lake_busy(message: str) -> bool:
    """Whether an error message is busy_message's (as dbt reports it, wrapped)."""
    return "is in use by" in message and WAIT_ENV in message


@dataclass
class LakeLock:
    """The lock this process holds on a lake (its file descriptor keeps the flock)."""

    lake: Path
    fd: int

    @property
    def path(self) -> Path:
        return self.lake / LOCK_FILE

    def release(self) -> None:
        """Let the lake go before the process ends (tests; a process normally never does)."""
        with _guard:
            if _held.get(self.lake) is self:
                del _held[self.lake]
        os.close(self.fd)


# the locks this process holds, by lake: dbt opens a connection per thread and invocation
_held: dict[Path, LakeLock] = {}
_guard = threading.Lock()


def read_holder(lake: Path) -> ProcessHolder | None:
    try:
        return parse_holder((lake / LOCK_FILE).read_text(errors="replace"))
    except OSError:
        return None


def _open_lock_file(path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except PermissionError:  # another user's lake: flock works on a read-only descriptor
        return os.open(path, os.O_RDONLY)


def _try_flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        raise
    return True


def _write_holder(fd: int, holder: ProcessHolder) -> None:
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, holder_text(holder).encode(), 0)
    except OSError:  # read-only descriptor: the lock holds, unnamed
        pass


def this_process(argv: Sequence[str] | None = None) -> ProcessHolder:
    pid = os.getpid()
    return ProcessHolder(
        pid=pid,
        command=describe_command(sys.argv if argv is None else argv),
        host=socket.gethostname(),
        started_at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        process_started=process_started(pid),
    )


def hold(
    lake: Path,
    allowed_wait: float = 0.0,
    progress: Progress = lambda message: None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> LakeLock:
    """Hold `lake` for the rest of this process (at once if this process holds it already),
    waiting up to `allowed_wait` seconds for another holder; past that, LakeBusyError."""
    lake = lake.resolve()
    with _guard:
        if lake in _held:
            return _held[lake]
        fd = _open_lock_file(lake / LOCK_FILE)
        started = clock()
        announced = False
        try:
            while not _try_flock(fd):
                waited = clock() - started
                holder = read_holder(lake)
                if not should_wait(waited, allowed_wait):
                    raise LakeBusyError(busy_message(lake, holder, waited, allowed_wait))
                if not announced:
                    who = holder.describe() if holder else "another process"
                    progress(f"waiting up to {allowed_wait:g} s for the lake {lake}: held by {who}")
                    announced = True
                sleep(min(POLL_SECONDS, max(0.0, allowed_wait - waited)))
        except BaseException:
            os.close(fd)
            raise
        _write_holder(fd, this_process())
        lock = LakeLock(lake, fd)
        _held[lake] = lock
        return lock


def hold_session_lake(
    settings: Mapping[str, str],
    environ: Mapping[str, str] = os.environ,
    progress: Progress = lambda message: None,
) -> LakeLock | None:
    """Before a SparkSession with `settings` starts: hold its lake when its metastore is
    embedded Derby (waiting as PROFILE_LAKE_WAIT_FOR_LAKE says); None for other metastores.
    Raises LakeBusyError, or WaitSettingError for a malformed wait."""
    lake = derby_lake(settings)
    if lake is None:
        return None
    return hold(lake, wait_seconds(environ.get(WAIT_ENV)), progress)
