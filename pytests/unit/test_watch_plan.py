"""`profile-lake watch` without Spark: which files wait, when a run is due, the progress line,
the memory bound, whether a watcher keeps up, and the loop itself with dbt stood in for."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from profile_lake.run_history import RunSummary, remember_run_summary
from profile_lake.watch.command import (
    EXIT_RESTART,
    Stopper,
    Watcher,
    WatchOptions,
    add_watch_arguments,
    code_roots,
    code_stamp,
    list_landing,
    run_watch,
)
from profile_lake.watch.plan import (
    ABANDON,
    EXIT_NOW,
    FINISH_THEN_STOP,
    STOP,
    LoopState,
    Schedule,
    dbt_build_args,
    due_reason,
    first_seen,
    is_landing_file,
    parse_duration,
    retry_delay,
    seconds_to_wait,
    session_lost,
    signal_action,
    waiting_files,
)
from profile_lake.watch.progress import (
    JVM_OVERHEAD_MB,
    PYTHON_GROWTH_MB,
    WARMUP_RUNS,
    RunLine,
    descendants,
    describe_failure,
    memory_bound_breach,
    memory_size_mb,
    parse_progress_line,
    progress_line,
    stat_parent,
    vm_rss_mb,
)
from profile_lake.watch.status import keeping_up, late_after_seconds, read_statuses
from pytests.support.watch_status import watcher_status

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)

# ---------- the landing folder


def test_durations_take_units() -> None:
    assert parse_duration("90") == 90.0
    assert parse_duration("30s") == 30.0
    assert parse_duration("1.5m") == 90.0
    assert parse_duration("2h") == 7200.0
    assert parse_duration("500ms") == 0.5
    assert parse_duration(".5") == 0.5
    for bad in ("", "5 minutes", "-1s", "m"):
        with pytest.raises(ValueError, match="not a duration"):
            parse_duration(bad)


def test_landing_files_are_the_ingests() -> None:
    assert is_landing_file("part-00001.jsonl") and is_landing_file("part-00002.jsonl.gz")
    assert not is_landing_file(".part-00003.jsonl.tmp")  # the generator's file being written
    assert not is_landing_file(".hidden.jsonl") and not is_landing_file("_SUCCESS")
    assert not is_landing_file("notes.txt") and not is_landing_file("part.jsonl.zip")


def test_files_wait_until_a_run_starts_from_them() -> None:
    handed = {"records/a.jsonl": (10, 1)}
    current = {
        "records/a.jsonl": (10, 1),
        "records/b.jsonl": (5, 2),
        "id_mutations/c.jsonl": (1, 3),
    }
    assert waiting_files(handed, current) == ["id_mutations/c.jsonl", "records/b.jsonl"]
    assert waiting_files(current, current) == []
    # a file replaced under its name waits again (the ingest decides what it does with it)
    assert waiting_files(handed, {"records/a.jsonl": (11, 4)}) == ["records/a.jsonl"]


def test_a_waiting_file_keeps_the_time_it_was_first_seen() -> None:
    seen = first_seen({}, ["a", "b"], 10.0)
    seen = first_seen(seen, ["b", "c"], 20.0)
    assert seen == {"b": 10.0, "c": 20.0}


def test_the_listing_holds_the_three_streams_landing_files(tmp_path: Path) -> None:
    for name in ("records/a.jsonl", "records/.b.jsonl.tmp", "entity_names/c.jsonl.gz", "x/d.jsonl"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}\n")
    assert sorted(list_landing(tmp_path)) == ["entity_names/c.jsonl.gz", "records/a.jsonl"]
    assert list_landing(tmp_path / "missing") == {}


# ---------- the schedule


SCHEDULE = Schedule(poll_seconds=5.0, min_interval_seconds=30.0, every_seconds=None)


def ran(start: float, end: float, failures: int = 0) -> LoopState:
    return LoopState(runs=1, last_start=start, last_end=end, consecutive_failures=failures)


def test_the_first_run_starts_at_once() -> None:
    assert due_reason(SCHEDULE, LoopState(), 0.0, 0) == "start"
    assert seconds_to_wait(SCHEDULE, LoopState(), 0.0, 0) == 0.0


def test_new_files_run_once_the_minimum_interval_has_passed() -> None:
    state = ran(100.0, 110.0)
    assert due_reason(SCHEDULE, state, 120.0, 3) is None  # 20 s after the last start
    assert seconds_to_wait(SCHEDULE, state, 128.0, 3) == pytest.approx(2.0)  # due at 130
    assert due_reason(SCHEDULE, state, 130.0, 3) == "new files"
    assert due_reason(SCHEDULE, state, 500.0, 0) is None  # nothing landed, no schedule
    assert seconds_to_wait(SCHEDULE, state, 500.0, 0) == 5.0  # a poll


def test_a_run_longer_than_the_interval_is_followed_at_once_when_files_wait() -> None:
    state = ran(100.0, 200.0)
    assert due_reason(SCHEDULE, state, 200.0, 1) == "new files"


def test_every_runs_without_new_files_never_closer_than_the_minimum_interval() -> None:
    every = replace(SCHEDULE, every_seconds=300.0)
    state = ran(100.0, 110.0)
    assert due_reason(every, state, 399.0, 0) is None
    assert seconds_to_wait(every, state, 398.0, 0) == pytest.approx(2.0)
    assert due_reason(every, state, 400.0, 0) == "schedule"
    back_to_back = Schedule(poll_seconds=0.2, min_interval_seconds=0.0, every_seconds=0.0)
    assert due_reason(back_to_back, state, 110.0, 0) == "schedule"


def test_a_failed_run_is_retried_later_and_later() -> None:
    assert [retry_delay(SCHEDULE, n) for n in range(6)] == [0, 30, 60, 120, 240, 480]
    assert retry_delay(SCHEDULE, 7) == 900.0 and retry_delay(SCHEDULE, 500) == 900.0
    assert retry_delay(Schedule(poll_seconds=5.0, min_interval_seconds=0.0), 1) == 5.0
    failed_twice = ran(100.0, 110.0, failures=2)
    assert due_reason(SCHEDULE, failed_twice, 169.0, 5) is None  # new files wait for the retry
    assert seconds_to_wait(SCHEDULE, failed_twice, 168.0, 5) == pytest.approx(2.0)
    assert due_reason(SCHEDULE, failed_twice, 170.0, 0) == "retry"  # with nothing new too


def test_the_loop_state_counts_failures_in_a_row() -> None:
    state = LoopState().after_run(0.0, 1.0, False).after_run(2.0, 3.0, False)
    assert (state.runs, state.consecutive_failures) == (2, 2)
    assert state.after_run(4.0, 5.0, True).consecutive_failures == 0


def test_schedule_problems_name_the_option() -> None:
    assert Schedule(poll_seconds=0.0).problems() == ["--poll must be more than 0 seconds"]
    assert Schedule(min_interval_seconds=-1.0, every_seconds=-1.0).problems() == [
        "--min-interval must be 0 seconds or more",
        "--every must be 0 seconds or more",
    ]


def test_a_stop_signal_lets_the_run_finish_a_second_abandons_it() -> None:
    assert signal_action(1, run_in_flight=True) == FINISH_THEN_STOP
    assert signal_action(1, run_in_flight=False) == STOP
    assert signal_action(2, run_in_flight=True) == ABANDON
    assert signal_action(2, run_in_flight=False) == EXIT_NOW
    assert signal_action(3, run_in_flight=True) == EXIT_NOW


def test_a_lost_spark_session_is_told_apart_from_a_failed_run() -> None:
    assert session_lost("py4j.protocol.Py4JNetworkError: Answer from Java side is empty")
    assert session_lost("Cannot call methods on a stopped SparkContext.")
    assert not session_lost("Database Error in model records: [DELTA_CONCURRENT_APPEND]")


def test_build_args_pass_dbt_options_through_and_refuse_a_full_refresh() -> None:
    args = dbt_build_args(
        ["+records"], ["resource_type:test"], "{tenants: [acme]}", "shared", ["--threads", "1"]
    )
    assert args == [
        "build", "--exclude-resource-type", "unit_test", "--select", "+records",
        "--exclude", "resource_type:test", "--vars", "{tenants: [acme]}", "--target", "shared",
        "--threads", "1",
    ]  # fmt: skip
    assert dbt_build_args([], [], None, None, []) == [
        "build", "--exclude-resource-type", "unit_test"
    ]  # fmt: skip
    # a watcher told its resource types keeps them, unit tests too
    assert dbt_build_args([], [], None, None, ["--resource-type", "unit_test"]) == [
        "build", "--resource-type", "unit_test"
    ]  # fmt: skip
    for refused in ("--full-refresh", "-f", "--full-refresh=true"):
        with pytest.raises(ValueError, match="rebuild every table"):
            dbt_build_args([], [], None, None, [refused])


# ---------- the progress line


def line(**fields: Any) -> RunLine:
    base = {
        "at": NOW,
        "run": 3,
        "status": "success",
        "seconds": 14.25,
        "reason": "new files",
        "files": 2,
        "lines": 1000,
        "tables_changed": (
            "int_record_states",
            "records",
            "record_notifications",
            "tenant_lag",
            "x",
        ),
        "rss_mb": 412,
        "jvm_mb": 1630,
    }
    return RunLine(**{**base, **fields})


def test_the_progress_line_says_files_lines_seconds_tables_and_memory() -> None:
    text = progress_line(line())
    assert text == (
        "2026-05-01T12:00:00Z watch run 3: success, 2 files, 1000 lines, 14.2 s, "
        "5 tables changed [int_record_states, records, record_notifications, tenant_lag, "
        "+1 more], rss 412 MB, jvm 1630 MB (new files)"
    )
    assert "\n" not in text
    parsed = parse_progress_line(text)
    assert parsed == {
        "at": "2026-05-01T12:00:00Z",
        "run": 3,
        "status": "success",
        "files": 2,
        "lines": 1000,
        "seconds": 14.2,
        "tables": 5,
        "names": ["int_record_states", "records", "record_notifications", "tenant_lag", "+1 more"],
        "rss_mb": 412,
        "jvm_mb": 1630,
        "reason": "new files",
    }


def test_the_progress_line_of_a_run_that_recorded_nothing() -> None:
    text = progress_line(
        line(status="error", files=None, lines=None, tables_changed=None, jvm_mb=None)
    )
    assert "? files, ? lines" in text and "? tables changed," in text and "jvm ? MB" in text
    parsed = parse_progress_line(text)
    assert parsed is not None
    assert (parsed["status"], parsed["files"], parsed["tables"], parsed["jvm_mb"]) == (
        "error", None, None, None,
    )  # fmt: skip
    no_tables = parse_progress_line(progress_line(line(tables_changed=())))
    assert no_tables is not None and (no_tables["tables"], no_tables["names"]) == (0, [])


def test_other_lines_are_not_progress_lines() -> None:
    assert parse_progress_line("2026-05-01T12:00:00Z watch: stopped after 3 runs (exit 0)") is None
    assert parse_progress_line("12:00:01  Finished running 12 models") is None


def test_a_failure_is_told_by_its_exception_or_its_failed_nodes() -> None:
    assert describe_failure(RuntimeError("lake busy"), []) == "RuntimeError: lake busy"
    nodes = [(f"m{i}", "error", f"boom {i}") for i in range(5)]
    assert describe_failure(None, nodes) == (
        "5 nodes failed: m0 (error): boom 0; m1 (error): boom 1; m2 (error): boom 2; and 2 more"
    )
    assert describe_failure(None, []) == "dbt build failed"


# ---------- memory


def test_memory_is_read_from_proc() -> None:
    assert vm_rss_mb("Name:\tpython\nVmRSS:\t  421888 kB\nVmSwap:\t0 kB\n") == 412
    assert vm_rss_mb("Name:\tkworker\n") is None
    assert stat_parent("4242 (java) S 4100 4242 4100 0 -1") == (4100, "java")
    assert stat_parent("77 (my (odd) name) R 1 77 77 0") == (1, "my (odd) name")
    assert descendants({10: 1, 11: 10, 12: 11, 13: 1, 14: 12}, 10) == {11, 12, 14}
    with open("/proc/self/status") as status:
        assert (vm_rss_mb(status.read()) or 0) > 0


def test_memory_sizes_as_spark_reads_them() -> None:
    assert memory_size_mb("6g") == 6144
    assert memory_size_mb("2048m") == 2048
    assert memory_size_mb("512k") == 0
    assert memory_size_mb("1G") == 1024
    with pytest.raises(ValueError):
        memory_size_mb("lots")


def test_the_memory_bound_allows_warm_up_then_bounded_growth() -> None:
    runs = 50
    flat = [300 + 10 * min(run, WARMUP_RUNS) for run in range(runs)]
    jvm = [1500] * runs
    assert memory_bound_breach(flat, jvm, 2048) is None
    slow = [400 + 3 * run for run in range(45)]  # 3 MB a run: 105 MB over runs 10 to 45
    assert memory_bound_breach(slow, jvm[:45], 2048) is None
    worse = [400 + 4 * run for run in range(runs)]
    breach = memory_bound_breach(worse, jvm, 2048)
    assert breach is not None and f"more than {PYTHON_GROWTH_MB} MB" in breach
    assert "run 50" in breach
    heavy = memory_bound_breach(flat, [*jvm[:-1], 2048 + JVM_OVERHEAD_MB + 1], 2048)
    assert heavy is not None and "driver JVM" in heavy
    assert "checked after" in (memory_bound_breach(flat[:WARMUP_RUNS], jvm, 2048) or "")


# ---------- keeping up


status = watcher_status


def test_a_watcher_with_nothing_waiting_keeps_up() -> None:
    assert keeping_up(status(), NOW, alive=True) == (True, "every landed file is in a run")


def test_files_waiting_longer_than_a_run_and_an_interval_are_late() -> None:
    # a run takes 40 s, the interval is 30 s: a file may wait 2 * 40 + 5 = 85 s
    assert late_after_seconds(status()) == 85.0
    recent = status(files_waiting=3, oldest_waiting_since="2026-05-01T11:59:00Z")
    assert keeping_up(recent, NOW, alive=True) == (
        True,
        "3 landed files waiting 60 s for the next run",
    )
    late = status(files_waiting=3, oldest_waiting_since="2026-05-01T11:58:00Z")
    assert keeping_up(late, NOW, alive=True) == (
        False, "3 landed files waiting for a run since 2026-05-01T11:58:00Z",
    )  # fmt: skip


def test_failing_gone_silent_and_stopped_watchers() -> None:
    failing = status(consecutive_failures=2, last_run={"status": "error", "message": "boom"})
    assert keeping_up(failing, NOW, alive=True) == (False, "its last 2 run(s) failed: boom")
    verdict, why = keeping_up(status(), NOW, alive=False)
    assert verdict is False and "gone without stopping" in why
    silent = status(updated_at="2026-05-01T11:50:00Z")
    verdict, why = keeping_up(silent, NOW, alive=None)  # on another host
    assert verdict is False and "not heard from" in why
    assert keeping_up(status(), NOW, alive=None)[0] is True
    running = status(state="running", updated_at="2026-05-01T11:00:00Z")
    assert keeping_up(running, NOW, alive=None)[0] is True  # a long run is not silence
    stopped = status(state="stopped", stopped_at="2026-05-01T11:00:00Z")
    assert keeping_up(stopped, NOW, alive=False) == (None, "stopped at 2026-05-01T11:00:00Z")


# ---------- the loop, with dbt stood in for


@pytest.fixture
def restored_signals() -> Iterator[None]:
    saved = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def outcome(success: bool, exception: BaseException | None = None, failed: tuple = ()) -> Any:
    results = [
        SimpleNamespace(node=SimpleNamespace(name=name), status=status, message=message)
        for name, status, message in failed
    ]
    return SimpleNamespace(
        success=success, exception=exception, result=SimpleNamespace(results=results)
    )


def watcher(
    tmp_path: Path,
    invoke: Callable[[list[str]], Any],
    max_runs: int | None = None,
    select: tuple[str, ...] = (),
) -> Watcher:
    landing = tmp_path / "landing"
    (landing / "records").mkdir(parents=True, exist_ok=True)
    (landing / "records" / "part-00000.jsonl").write_text("{}\n")
    options = WatchOptions(
        schedule=Schedule(poll_seconds=0.01, min_interval_seconds=0.0),
        build_args=tuple(dbt_build_args(select, [], None, None, [])),
        target=None,
        max_runs=max_runs,
        verbose=False,
    )
    return Watcher(
        options=options,
        landing=landing,
        home=tmp_path / "home",
        schema="lake",
        project_dir=tmp_path / "project",
        profiles_dir=tmp_path / "profiles",
        stopper=Stopper(abandon_grace_seconds=None),
        invoke=invoke,
    )


def progress_lines(text: str) -> list[dict]:
    return [parsed for text_line in text.splitlines() if (parsed := parse_progress_line(text_line))]


def summarized(files: int, lines: int) -> None:
    """What the adapter's on-run-end does in a real run."""
    remember_run_summary(RunSummary("r", "success", files, lines, ("records",), 1.0))


def test_the_watcher_runs_at_start_then_when_files_land(tmp_path, capsys, restored_signals) -> None:
    calls: list[list[str]] = []

    def invoke(args: list[str]) -> Any:
        calls.append(args)
        if len(calls) == 1:  # a file lands while the first run goes on
            (tmp_path / "landing" / "records" / "part-00001.jsonl").write_text("{}\n{}\n")
        summarized(files=1, lines=len(calls))
        return outcome(True)

    watch = watcher(tmp_path, invoke, max_runs=2, select=("+records",))
    assert watch.run() == 0
    runs = progress_lines(capsys.readouterr().out)
    assert [(run["run"], run["status"], run["reason"], run["files"]) for run in runs] == [
        (1, "success", "start", 1),
        (2, "success", "new files", 1),
    ]
    assert runs[0]["names"] == ["records"] and (runs[0]["rss_mb"] or 0) > 0
    assert calls[0] == [
        "build", "--exclude-resource-type", "unit_test", "--select", "+records",
        "--project-dir", str(tmp_path / "project"), "--profiles-dir", str(tmp_path / "profiles"),
        "--quiet",
    ]  # fmt: skip
    (written,) = read_statuses(tmp_path / "home", "lake")
    assert (written["state"], written["runs"], written["files_waiting"]) == ("stopped", 2, 0)
    assert written["last_run"]["reason"] == "new files" and written["pid"] == os.getpid()


def test_a_failed_run_is_logged_and_retried(tmp_path, capsys, restored_signals) -> None:
    results = iter(
        [
            outcome(False, failed=(("records", "error", "MERGE failed"),)),
            outcome(False, exception=RuntimeError("metastore unreachable")),
            outcome(True),
        ]
    )
    watch = watcher(tmp_path, lambda args: next(results), max_runs=3)
    assert watch.run() == 0
    out = capsys.readouterr().out
    runs = progress_lines(out)
    assert [(run["status"], run["reason"], run["files"]) for run in runs] == [
        ("error", "start", None),
        ("error", "retry", None),
        ("success", "retry", None),
    ]
    assert (
        "watch run 1 failed: 1 nodes failed: records (error): MERGE failed; next try in 0 s" in out
    )
    assert "watch run 2 failed: RuntimeError: metastore unreachable" in out


def test_a_lost_spark_session_ends_the_watcher(tmp_path, capsys, restored_signals) -> None:
    lost = outcome(
        False, exception=RuntimeError("Py4JNetworkError: Answer from Java side is empty")
    )
    watch = watcher(tmp_path, lambda args: lost)
    assert watch.run() == 1
    assert "the Spark session is gone" in capsys.readouterr().out


def test_arguments_dbt_refuses_end_the_watcher(tmp_path, capsys, restored_signals) -> None:
    class DbtUsageException(Exception):  # dbt's, by name (dbt.cli.exceptions)
        pass

    refused = DbtUsageException("Got unexpected extra argument (records)")
    watch = watcher(tmp_path, lambda args: outcome(False, exception=refused))
    assert watch.run() == 2
    out = capsys.readouterr().out
    assert "unexpected extra argument" in out and "dbt refuses these build arguments" in out


def test_a_lake_held_by_another_process_ends_the_watcher(
    tmp_path, capsys, restored_signals
) -> None:
    from profile_lake.locks.process_lock import busy_message

    busy = RuntimeError(f"Runtime Error\n  {busy_message(tmp_path, None, 0.0, 0.0)}")
    watch = watcher(tmp_path, lambda args: outcome(False, exception=busy))
    assert watch.run() == 1
    assert "another process holds the lake" in capsys.readouterr().out


def test_sigterm_lets_the_run_in_flight_finish(tmp_path, capsys, restored_signals) -> None:
    def invoke(args: list[str]) -> Any:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)  # the handler runs; the run goes on
        summarized(files=1, lines=3)
        return outcome(True)

    watch = watcher(tmp_path, invoke)  # no --max-runs: only the signal stops it
    assert watch.run() == 0
    out = capsys.readouterr().out
    assert "SIGTERM: stopping after the run in flight" in out
    assert [run["status"] for run in progress_lines(out)] == ["success"]
    assert "stopped after 1 runs (exit 0)" in out


def test_a_second_sigterm_abandons_the_run(tmp_path, capsys, restored_signals) -> None:
    def invoke(args: list[str]) -> Any:
        try:  # dbtRunner returns an interrupted invocation as a failed result
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        except KeyboardInterrupt as interrupt:
            return outcome(False, exception=interrupt)
        raise AssertionError("the second signal did not interrupt the run")

    watch = watcher(tmp_path, invoke)
    assert watch.run() == 128 + signal.SIGTERM
    out = capsys.readouterr().out
    assert "abandoning the run in flight" in out
    assert [run["status"] for run in progress_lines(out)] == ["abandoned"]


def test_a_change_to_its_python_code_ends_the_watcher_for_a_restart(
    tmp_path, capsys, restored_signals
) -> None:
    package = tmp_path / "package"
    package.mkdir()
    (package / "module.py").write_text("VALUE = 1\n")

    def invoke(args: list[str]) -> Any:  # a deployment while the first run goes on
        (package / "module.py").write_text("VALUE = 2  # new\n")
        return outcome(True)

    watch = watcher(tmp_path, invoke, max_runs=5)  # nothing lands after the first run
    watch.code = (package,)
    assert watch.run() == EXIT_RESTART
    out = capsys.readouterr().out
    assert len(progress_lines(out)) == 1 and "the Python code changed on disk" in out


def test_the_code_watched_is_the_package_and_the_adapter() -> None:
    roots = code_roots()
    assert roots[0].name == "profile_lake" and (roots[0] / "watch" / "command.py").is_file()
    assert any((root / "connections.py").is_file() for root in roots[1:])
    assert code_stamp(roots) == code_stamp(roots)


def test_the_command_refuses_bad_options_and_a_held_lake(capsys, monkeypatch) -> None:
    import argparse

    from profile_lake.locks.process_lock import LakeBusyError
    from profile_lake.run_history import RUN_ORIGIN_ENV

    monkeypatch.delenv(RUN_ORIGIN_ENV, raising=False)
    parser = argparse.ArgumentParser()
    add_watch_arguments(parser)
    assert run_watch(parser.parse_args(["--poll", "0"]), hold_lake=lambda *_: None) == 2
    assert "--poll must be more than 0 seconds" in capsys.readouterr().err
    assert run_watch(parser.parse_args(["--every", "soon"]), hold_lake=lambda *_: None) == 2
    assert "not a duration: 'soon'" in capsys.readouterr().err

    def held(target: str | None, profiles_dir: Path) -> None:
        raise LakeBusyError("The lake /x is in use by pid 7 (dbt build) on h1")

    assert run_watch(parser.parse_args(["--target", "local"]), hold_lake=held) == 1
    assert "error: The lake /x is in use by pid 7 (dbt build)" in capsys.readouterr().err
    assert RUN_ORIGIN_ENV not in os.environ  # set only once the watcher runs


def test_status_files_of_gone_watchers_on_this_host_are_removed(tmp_path, restored_signals) -> None:
    import socket
    import subprocess
    import sys

    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True
    )
    dead_pid = int(gone.stdout)
    folder = tmp_path / "home" / "watch" / "lake"
    folder.mkdir(parents=True)
    (folder / f"{socket.gethostname()}-{dead_pid}.json").write_text(json.dumps(status()))
    (folder / f"elsewhere-{dead_pid}.json").write_text(json.dumps(status()))
    watch = watcher(tmp_path, lambda args: outcome(True), max_runs=1)
    assert watch.run() == 0
    names = sorted(path.name for path in folder.glob("*.json"))
    assert names == sorted(
        [f"elsewhere-{dead_pid}.json", f"{socket.gethostname()}-{os.getpid()}.json"]
    )


def test_the_watcher_purges_with_the_horizon_its_runs_use() -> None:
    import argparse

    from profile_lake.watch.command import WatchOptions, purge_horizon_hours

    assert purge_horizon_hours(None) == 168.0  # dbt_project.yml's default
    assert purge_horizon_hours("{erasure_purge_hours: 2, tenants: [acme]}") == 2.0
    parser = argparse.ArgumentParser()
    add_watch_arguments(parser)
    options = WatchOptions.from_args(
        parser.parse_args(["--vars", "{erasure_purge_hours: 6}", "--target", "local"])
    )
    assert (options.erasure_purge_hours, options.target) == (6.0, "local")
