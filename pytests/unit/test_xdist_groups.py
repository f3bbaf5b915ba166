"""`make test`'s use of pytest-xdist keeps its promises (pytests/support/scheduling.py).

A small suite laid out like ours (a shared-lake folder, modules of their own, pure-logic ones)
runs in a pytest subprocess with two workers and `make test`'s options, through the same hook:
each module runs whole on one worker, the shared folder's modules all on one, and on each worker
the pure-logic modules come after the others. xdist has silently stopped grouping before (with
pytest 9.2, pytest-dev/pytest-xdist#1386): then this fails, rather than the next test run
building every lake twice. And the suite's own groups (pytests/conftest.py) name folders and
modules that exist, so that a module moved into a folder or merged away cannot silently stop
sharing its lake or being handed out first.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from profile_lake.project import PROJECT_DIR
from pytests.support.scheduling import xdist_group

SHARED = "tests/shared_lake/"
PURE_LOGIC = "tests/unit/"
LONGEST = "tests/spark/test_f.py"  # the smallest Spark module, named as the longest
CONFTEST = f"""
import pytest

from pytests.support.scheduling import group_and_order


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    group_and_order(config, items, ({SHARED!r},), ({PURE_LOGIC!r},), ({LONGEST!r},))
"""
MODULES = {
    f"{SHARED}test_a.py": 3,
    f"{SHARED}test_b.py": 3,
    f"{SHARED}test_c.py": 3,
    "tests/spark/test_d.py": 2,
    "tests/spark/test_e.py": 4,
    "tests/spark/test_f.py": 2,
    f"{PURE_LOGIC}test_u.py": 5,
    f"{PURE_LOGIC}test_v.py": 5,
}
MAKE_TEST_OPTIONS = ["-n", "2", "--dist", "loadgroup", "--no-loadscope-reorder"]
RESULT = re.compile(r"^\[(gw\d+)\] \[\s*\d+%\] PASSED (\S+?)::")


def test_xdist_group_is_the_shared_folder_or_the_module() -> None:
    assert xdist_group(f"{SHARED}test_a.py::test[1]", (SHARED,)) == SHARED
    assert xdist_group("tests/spark/test_d.py::Class::test", (SHARED,)) == "tests/spark/test_d.py"


def suite_groups() -> dict[str, tuple[str, ...]]:
    """The tuples pytests/conftest.py assigns at module level, read without importing it (a
    second import would give this session a second lake home)."""
    tree = ast.parse((PROJECT_DIR / "pytests" / "conftest.py").read_text())
    return {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Tuple)
        and [type(target) for target in node.targets] == [ast.Name]
    }


def test_the_suites_groups_name_folders_and_modules_that_exist() -> None:
    groups = suite_groups()
    shared = groups["SHARED_LAKE_FOLDERS"]
    for folder in shared:
        assert list((PROJECT_DIR / folder).glob("test_*.py")), f"{folder}: no test module"
    for group in groups["LONGEST_GROUPS"]:
        assert (PROJECT_DIR / group).exists(), f"{group}: no such folder or module"
        # a module of a shared folder is the folder's group: the folder is what to name
        assert xdist_group(group, shared) == group, f"{group} is in a shared folder"


def child_environment() -> dict[str, str]:
    """This environment without pytest's own variables, the repository root on the path."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_DIR), env.get("PYTHONPATH")]))
    return env


def run_small_suite(root: Path) -> list[tuple[str, str]]:
    """(worker, module) of each test, in the order each worker ran them."""
    (root / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    (root / "conftest.py").write_text(CONFTEST)
    for module, tests in MODULES.items():
        (root / module).parent.mkdir(parents=True, exist_ok=True)
        (root / module).write_text(
            f"import pytest\n\n@pytest.mark.parametrize('i', range({tests}))\n"
            "def test_one(i):\n    pass\n"
        )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *MAKE_TEST_OPTIONS, "-v", "tests"],
        cwd=root,
        env=child_environment(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    ran = [match.groups() for line in result.stdout.splitlines() if (match := RESULT.match(line))]
    assert len(ran) == sum(MODULES.values()), result.stdout
    return ran


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str]]:
    return run_small_suite(tmp_path_factory.mktemp("xdist"))


def test_a_module_runs_whole_on_one_worker(ran) -> None:
    workers = defaultdict(set)
    for worker, module in ran:
        workers[module].add(worker)
    assert {module: len(on) for module, on in workers.items()} == dict.fromkeys(MODULES, 1)


def test_the_modules_of_a_shared_folder_run_on_one_worker(ran) -> None:
    assert len({worker for worker, module in ran if module.startswith(SHARED)}) == 1


def test_pure_logic_modules_come_last_on_each_worker(ran) -> None:
    by_worker = defaultdict(list)
    for worker, module in ran:
        by_worker[worker].append(module.startswith(PURE_LOGIC))
    assert len(by_worker) == 2, "both workers got work"
    for worker, pure_logic in by_worker.items():
        assert pure_logic == sorted(pure_logic), f"{worker} ran a Spark module after pure logic"


def test_the_longest_group_is_handed_out_first(ran) -> None:
    first_on_each_worker = {}
    for worker, module in ran:
        first_on_each_worker.setdefault(worker, module)
    assert LONGEST in first_on_each_worker.values(), first_on_each_worker
