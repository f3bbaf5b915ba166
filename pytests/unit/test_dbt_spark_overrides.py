"""The copy of dbt-spark's incremental materialization stays pinned to the installed dbt-spark.

`macros/dbt_spark_overrides/` holds every override of dbt-spark in the project. Two of them
wrap dbt-spark's macros (they call the originals for every strategy but ours); one is a copy
of its incremental materialization with the patches that macros/_macros.yml lists. An upgrade of
dbt-spark that changes the original, or the signature of a wrapped macro, fails here, naming
the installed file, so that the patches are applied again to the new version.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import dbt.include.spark

from pytests.support.dbt_runner import PROJECT_DIR

OVERRIDES = PROJECT_DIR / "macros" / "dbt_spark_overrides"
SPARK_MACROS = Path(dbt.include.spark.__file__).parent / "macros"
UPSTREAM_INCREMENTAL = SPARK_MACROS / "materializations" / "incremental" / "incremental.sql"
OUR_INCREMENTAL = OVERRIDES / "materialization_incremental_profile_lake_spark.sql"

# the only lines of dbt-spark's original that the copy replaces (the rest it keeps, in order)
REPLACED_UPSTREAM_LINES = {
    "{% materialization incremental, adapter='spark', supported_languages=['sql', 'python'] -%}",
    "{% set tmp_relation = this.incorporate(path = "
    """{"identifier": this.identifier ~ '__dbt_tmp'}) -%}""",
    "{%- do process_schema_changes(on_schema_change, tmp_relation, existing_relation) -%}",
}

WRAPPED = {
    "dbt_spark_get_incremental_sql": (
        "strategies.sql",
        "strategy, source, target, existing, unique_key, incremental_predicates",
    ),
    "dbt_spark_validate_get_incremental_strategy": ("validate.sql", "raw_strategy, file_format"),
}


def _lines(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text().splitlines()]


def upstream_lines_not_kept(upstream: list[str], ours: list[str]) -> list[str]:
    """The lines of `upstream` that `ours` neither keeps (in order) nor replaces on purpose."""
    matcher = difflib.SequenceMatcher(a=upstream, b=ours, autojunk=False)
    lost: list[str] = []
    for tag, a_start, a_end, _, _ in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            lost.extend(
                line
                for line in upstream[a_start:a_end]
                if line and line not in REPLACED_UPSTREAM_LINES
            )
    return lost


def test_upstream_lines_not_kept_finds_a_changed_line() -> None:
    upstream = [
        "a",
        "{%- do process_schema_changes(on_schema_change, tmp_relation, existing_relation) -%}",
        "b",
    ]
    assert upstream_lines_not_kept(upstream, ["a", "ours", "b", "more"]) == []
    assert upstream_lines_not_kept(upstream, ["a", "ours", "b2"]) == ["b"]


def test_the_materialization_copy_keeps_every_line_of_the_installed_original() -> None:
    lost = upstream_lines_not_kept(_lines(UPSTREAM_INCREMENTAL), _lines(OUR_INCREMENTAL))
    assert not lost, (
        f"dbt-spark's incremental materialization ({UPSTREAM_INCREMENTAL}) no longer matches "
        f"our copy ({OUR_INCREMENTAL.relative_to(PROJECT_DIR)}): lines of the installed "
        f"original that the copy does not have: {lost}. Copy the new original again and "
        "re-apply the patches that macros/_macros.yml lists for "
        "materialization_incremental_profile_lake_spark."
    )


def test_every_replaced_line_is_still_in_the_original() -> None:
    upstream = set(_lines(UPSTREAM_INCREMENTAL))
    missing = sorted(REPLACED_UPSTREAM_LINES - upstream)
    assert not missing, f"{UPSTREAM_INCREMENTAL} changed where our copy patches it: {missing}"


def test_wrapped_macros_keep_their_signature() -> None:
    for name, (file_name, arguments) in WRAPPED.items():
        installed = SPARK_MACROS / "materializations" / "incremental" / file_name
        signature = re.search(rf"macro {name}\(([^)]*)\)", installed.read_text())
        assert signature is not None, f"{installed} no longer defines {name}, which we wrap"
        assert signature.group(1) == arguments, (
            f"{installed}: {name}({signature.group(1)}) changed its arguments; our wrapper "
            f"macros/dbt_spark_overrides/{name}.sql calls it with ({arguments})"
        )
        ours = (OVERRIDES / f"{name}.sql").read_text()
        assert f"dbt.{name}(" in ours, f"{name}.sql no longer wraps dbt-spark's {name}"


def test_overrides_of_dbt_spark_live_in_one_folder() -> None:
    spark_names = {
        match.group(1)
        for path in SPARK_MACROS.rglob("*.sql")
        for match in re.finditer(r"macro (\w+)\(", path.read_text())
    }
    elsewhere = sorted(
        f"{path.relative_to(PROJECT_DIR)}: {match.group(1)}"
        for path in (PROJECT_DIR / "macros").rglob("*.sql")
        if path.parent != OVERRIDES
        for match in re.finditer(r"(?:macro|materialization) (\w+)", path.read_text())
        if match.group(1) in spark_names or match.group(1) == "incremental"
    )
    assert not elsewhere, f"overrides of dbt-spark outside {OVERRIDES}: {elsewhere}"
