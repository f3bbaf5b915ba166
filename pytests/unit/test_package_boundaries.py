"""The shipped code never imports the tests' support package, and its pure logic loads no Spark.

`profile_lake` and the adapter plugin are what `pip install` ships; the test support
(pytests/support: dbt runners, a throwaway PostgreSQL, the browser) lives beside the tests
and is not installed. Every module of the shipped code is parsed, and any import of it,
however spelled (`import`, `from ... import`, `importlib.import_module`), fails here, naming
the file and the line.

The erasure rules run inside Spark's Python workers and in commands that start no JVM:
importing them, and all they import, must not load Spark.
"""

from __future__ import annotations

import ast
import subprocess
import sys

from profile_lake.project import PROJECT_DIR

SHIPPED = (PROJECT_DIR / "profile_lake", PROJECT_DIR / "adapter" / "dbt")
TEST_SUPPORT = "pytests"


def is_test_support(module: str) -> bool:
    return module == TEST_SUPPORT or module.startswith(f"{TEST_SUPPORT}.")


def imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every absolute import in a module, `import_module("...")` included."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def test_the_checker_sees_every_spelling() -> None:
    tree = ast.parse(
        "import pytests.support.dbt_runner\n"
        "from pytests.support import browser\n"
        "def f():\n"
        "    from pytests.support.session import profile_session\n"
        "    importlib.import_module('pytests.support.jvm')\n"
        "import pytestsupport\n"
    )
    hits = sorted(line for line, module in imported_modules(tree) if is_test_support(module))
    assert hits == [1, 2, 4, 5]


def test_shipped_code_never_imports_test_support() -> None:
    files = [path for root in SHIPPED for path in sorted(root.rglob("*.py"))]
    assert len(files) > 20, f"too few modules found under {SHIPPED}"
    offending = [
        f"{path.relative_to(PROJECT_DIR)}:{line}: imports {module}"
        for path in files
        for line, module in imported_modules(ast.parse(path.read_text(), str(path)))
        if is_test_support(module)
    ]
    assert not offending, "shipped code imports the tests' support package:\n" + "\n".join(
        offending
    )


PURE_MODULES = (
    "profile_lake.erasure.due",
    "profile_lake.erasure.filtering",
    "profile_lake.erasure.hashing",
    "profile_lake.erasure.lines",
    "profile_lake.erasure.log_purge",
    "profile_lake.erasure.subject",
    "profile_lake.mart_feeds",
)
SPARK_PACKAGES = ("pyspark", "delta", "py4j", "profile_lake.spark")


def is_spark(module: str) -> bool:
    return any(module == name or module.startswith(f"{name}.") for name in SPARK_PACKAGES)


def test_the_checker_tells_spark_from_its_neighbours() -> None:
    assert [is_spark(m) for m in ("pyspark.sql", "delta", "profile_lake.spark.records")] == [
        True,
        True,
        True,
    ]
    assert not any(is_spark(m) for m in ("deltalake", "profile_lake.sparkline", "profile_lake"))


def test_the_erasure_logic_loads_no_spark() -> None:
    imports = "; ".join(f"import {module}" for module in PURE_MODULES)
    code = f"{imports}; import sys; print(*sys.modules)"
    loaded = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT_DIR, capture_output=True, text=True, check=True
    ).stdout.split()
    assert set(PURE_MODULES) <= set(loaded)
    assert [module for module in loaded if is_spark(module)] == []
