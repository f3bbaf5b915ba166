"""One process at a time on an embedded-Derby lake: which sessions hold the lake, what a second
process is told, and the flock itself between two real processes (no Spark)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from profile_lake.locks.process_lock import (
    LOCK_FILE,
    METASTORE_URL_KEY,
    WAIT_ENV,
    LakeBusyError,
    ProcessHolder,
    WaitSettingError,
    busy_message,
    derby_lake,
    describe_command,
    hold,
    hold_session_lake,
    holder_text,
    lake_busy,
    parse_holder,
    read_holder,
    should_wait,
    wait_seconds,
)
from profile_lake.project import PROJECT_DIR

HOLDER = ProcessHolder(4242, "profile-lake watch --poll 5s", "h1", "2026-05-01 12:00:00 UTC", "99")


def test_only_an_embedded_derby_metastore_is_held() -> None:
    url = {METASTORE_URL_KEY: "jdbc:derby:;databaseName=/data/lake/metastore_db;create=true"}
    assert derby_lake(url) == Path("/data/lake")
    assert derby_lake({METASTORE_URL_KEY: "jdbc:derby:/data/other/metastore_db;create=true"}) == (
        Path("/data/other")
    )
    relative = derby_lake({METASTORE_URL_KEY: "jdbc:derby:;databaseName=.lake/metastore_db"})
    assert relative == Path(".lake").absolute()
    postgres = {METASTORE_URL_KEY: "jdbc:postgresql://localhost:5432/metastore"}
    assert derby_lake(postgres) is None
    assert derby_lake({}) is None
    assert derby_lake({METASTORE_URL_KEY: "jdbc:derby:memory:meta;create=true"}) is None
    assert derby_lake({**url, "spark.sql.catalogImplementation": "in-memory"}) is None


def test_the_committed_profiles_local_target_is_held_and_shared_is_not() -> None:
    import yaml

    outputs = yaml.safe_load((PROJECT_DIR / "profiles" / "profiles.yml").read_text())[
        "profile_lake"
    ]["outputs"]
    local_url = outputs["local"]["server_side_parameters"][METASTORE_URL_KEY]
    shared_url = outputs["shared"]["server_side_parameters"][METASTORE_URL_KEY]
    assert local_url.startswith("jdbc:derby:") and "metastore_db" in local_url
    assert not shared_url.startswith("jdbc:derby:")


def test_the_wait_is_seconds() -> None:
    assert wait_seconds(None) == 0.0 and wait_seconds("") == 0.0 and wait_seconds(" ") == 0.0
    assert wait_seconds("12.5") == 12.5
    assert wait_seconds("inf") == float("inf")
    for bad in ("soon", "-1", "nan"):
        with pytest.raises(WaitSettingError, match=WAIT_ENV):
            wait_seconds(bad)
    assert should_wait(0.5, 1.0) and not should_wait(1.0, 1.0) and not should_wait(0.0, 0.0)


def test_commands_read_as_typed() -> None:
    assert (
        describe_command(["/x/.venv/bin/dbt", "build", "-s", "records"]) == "dbt build -s records"
    )
    assert describe_command(["/x/profile_lake/cli.py", "watch"]) == "profile-lake watch"
    assert describe_command(["/x/pytest/__main__.py", "-q"]) == "python -m pytest -q"
    assert describe_command(["-c", "a"]) == "python -c a"
    assert describe_command([]) == "python"
    assert len(describe_command(["dbt", "x" * 1000])) == 300


def test_the_holder_round_trips_through_its_file_text() -> None:
    assert parse_holder(holder_text(HOLDER)) == HOLDER
    for garbage in ("", "{", "[]", '{"pid": "x"}', "not json"):
        assert parse_holder(garbage) is None


def test_the_message_names_the_holder_and_what_to_do() -> None:
    message = busy_message(Path("/data/lake"), HOLDER, 0.0, 0.0)
    assert message.startswith(
        "The lake /data/lake is in use by pid 4242 (profile-lake watch --poll 5s) on h1, "
        "holding it since 2026-05-01 12:00:00 UTC."
    )
    for what in ("embedded Derby", "`kill 4242`", f"{WAIT_ENV}=<seconds>", "`shared` target"):
        assert what in message
    assert "\n" not in message
    assert lake_busy(f"Runtime Error\n  {message}") and not lake_busy("Runtime Error: boom")
    waited = busy_message(Path("/data/lake"), None, 30.2, 30.0)
    assert (
        "in use by another process" in waited and f"waited 30.2 s for it ({WAIT_ENV}=30)" in waited
    )


# ---------- the flock between processes

HOLDING_CHILD = """
import sys, time
sys.path.insert(0, sys.argv[2])
from pathlib import Path
from profile_lake.locks.process_lock import hold
hold(Path(sys.argv[1]))
print("held", flush=True)
time.sleep(120)
"""


@pytest.fixture
def held_by_child(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen]]:
    lake = tmp_path / "lake"
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDING_CHILD, str(lake), str(PROJECT_DIR)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        yield lake, child
    finally:
        child.kill()
        child.wait()


def test_a_second_process_is_told_who_holds_the_lake(held_by_child) -> None:
    lake, child = held_by_child
    holder = read_holder(lake)
    assert holder is not None and holder.pid == child.pid and holder.command.startswith("python -c")
    started = time.monotonic()
    with pytest.raises(LakeBusyError) as raised:
        hold(lake)
    assert time.monotonic() - started < 1.0
    assert f"in use by pid {child.pid} (python -c" in str(raised.value)


def test_a_process_asked_to_wait_waits_then_gives_up(held_by_child) -> None:
    lake, child = held_by_child
    said: list[str] = []
    started = time.monotonic()
    with pytest.raises(LakeBusyError, match=f"waited 0\\.[0-9] s for it \\({WAIT_ENV}=0.3\\)"):
        hold(lake, allowed_wait=0.3, progress=said.append)
    assert 0.3 <= time.monotonic() - started < 2.0
    assert len(said) == 1 and f"held by pid {child.pid}" in said[0]


def test_a_waiting_process_gets_the_lake_when_its_holder_ends(held_by_child) -> None:
    lake, child = held_by_child
    started = time.monotonic()

    def end_holder_soon(seconds: float) -> None:
        if time.monotonic() - started > 0.2:
            child.kill()
            child.wait()
        time.sleep(seconds)

    lock = hold(lake, allowed_wait=10.0, sleep=end_holder_soon)
    try:
        holder = read_holder(lake)
        assert holder is not None and holder.pid != child.pid  # this process now
    finally:
        lock.release()


def test_a_killed_holder_frees_the_lake_and_this_process_holds_it_once(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDING_CHILD, str(lake), str(PROJECT_DIR)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "held"
    child.kill()  # SIGKILL: no clean-up of its own
    child.wait()
    lock = hold(lake)
    try:
        assert hold(lake) is lock  # dbt opens a connection per thread: the same hold
        assert (lake / LOCK_FILE).is_file()
        busy = subprocess.run(
            [sys.executable, "-c", HOLDING_CHILD, str(lake), str(PROJECT_DIR)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert busy.returncode != 0 and "LakeBusyError" in busy.stderr
    finally:
        lock.release()


def test_sessions_on_other_metastores_hold_nothing(tmp_path: Path) -> None:
    postgres = {METASTORE_URL_KEY: "jdbc:postgresql://db/metastore"}
    assert hold_session_lake(postgres, environ={}) is None
    derby = {METASTORE_URL_KEY: f"jdbc:derby:;databaseName={tmp_path}/metastore_db;create=true"}
    with pytest.raises(WaitSettingError):
        hold_session_lake(derby, environ={WAIT_ENV: "a while"})
    lock = hold_session_lake(derby, environ={})
    assert lock is not None and lock.lake == tmp_path.resolve()
    lock.release()
