"""dbt docs build on the project, and STYLE.md's conventions checked on dbt's own view of it.

The conventions are checked by walking the manifest that the sample's whole build wrote (the
whole project, parsed once): names per layer, descriptions, a key test per model, a public and
enforced contract on every mart, one macro per file and one `_*__models.yml` per folder. Each
test lists every violation it finds in its message.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from pytests.support.dbt_runner import PROJECT_DIR

PACKAGE = "profile_lake"
MODEL_ROOTS = ("models", "python_models")
LAYERS = ("staging", "intermediate", "marts")
# A macro file may also hold dispatch implementations of its macro, for these adapters
# (ours, then the ones it inherits from).
DISPATCH_PREFIXES = ("default", "spark", "profile_lake_spark")
# Output tables of SPEC.md that dbt docs must describe.
OUTPUT_TABLES = ("records", "ingest_errors")


def assert_no_violations(rule: str, violations: list[str]) -> None:
    listed = "\n".join(f"  - {violation}" for violation in sorted(violations))
    assert not violations, f"{rule}: {len(violations)} violation(s)\n{listed}"


def ours(items: dict[str, dict[str, Any]], *resource_types: str) -> list[dict[str, Any]]:
    return [
        item
        for item in items.values()
        if item["package_name"] == PACKAGE
        and (not resource_types or item["resource_type"] in resource_types)
    ]


def described(item: dict[str, Any], key: str = "description") -> bool:
    return bool((item.get(key) or "").strip())


def patch_file(item: dict[str, Any]) -> str | None:
    """The project-relative path of the YAML file documenting a node or macro."""
    patch = item.get("patch_path")
    return patch.split("://", 1)[1] if patch else None


# --------------------------------------------------------------------------------------------
# dbt docs generate on the built sample
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def docs(sample_docs: Path) -> dict[str, dict[str, Any]]:
    """`dbt docs generate` on the sample's schemas (the session's `sample_docs`)."""
    return {
        "catalog": json.loads((sample_docs / "catalog.json").read_text()),
        "manifest": json.loads((sample_docs / "manifest.json").read_text()),
    }


@pytest.mark.integration
def test_docs_catalog_lists_the_output_tables_with_their_columns(docs, sample_lake) -> None:
    catalog, manifest = docs["catalog"], docs["manifest"]
    assert not catalog.get("errors"), catalog.get("errors")
    for name in OUTPUT_TABLES:
        unique_id = f"model.{PACKAGE}.{name}"
        entry = catalog["nodes"].get(unique_id)
        assert entry, f"{name} is not in catalog.json"
        assert entry["metadata"]["schema"] == sample_lake.schema
        assert entry["metadata"]["name"] == name
        columns = {column.lower() for column in entry["columns"]}
        assert columns, f"catalog.json lists no column of {name}"
        # the table's real columns are exactly the documented ones
        assert columns == {column.lower() for column in manifest["nodes"][unique_id]["columns"]}
        assert described(manifest["nodes"][unique_id]), f"{name} has no description in the docs"


@pytest.mark.integration
def test_every_built_model_column_is_documented(docs) -> None:
    """The columns the tables really have (catalog) against the documented ones (manifest):
    a column missing from the YAML has no description, a documented column that is not in the
    table is stale."""
    catalog, manifest = docs["catalog"], docs["manifest"]
    violations = []
    models = ours(manifest["nodes"], "model")
    assert models
    for model in models:
        entry = catalog["nodes"].get(model["unique_id"])
        if entry is None:
            violations.append(f"model {model['name']}: not in catalog.json (not built?)")
            continue
        built = {column.lower() for column in entry["columns"]}
        documented = {column.lower() for column in model["columns"]}
        for column in sorted(built - documented):
            violations.append(f"model {model['name']}: column {column} is not documented")
        for column in sorted(documented - built):
            violations.append(
                f"model {model['name']}: documented column {column} is not in the table"
            )
    assert_no_violations("Every column of every built model is documented", violations)


# --------------------------------------------------------------------------------------------
# Conventions (STYLE.md), on the manifest of the sample's build (the whole project parsed)
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def manifest(sample_lake) -> dict[str, Any]:
    target = sample_lake.lake_home / "target" / sample_lake.schema
    parsed = json.loads((target / "manifest.json").read_text())
    # the walk cannot pass on an empty project
    for resource_type in ("model", "seed"):
        assert ours(parsed["nodes"], resource_type), f"the manifest has no {resource_type}"
    assert ours(parsed["sources"]) and ours(parsed["macros"])
    return parsed


def model_place(model: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    """(layer, folders below the layer) of a model's file, e.g. ('staging', ('records',))."""
    parts = PurePosixPath(model["original_file_path"]).parts
    if len(parts) < 3 or parts[0] not in MODEL_ROOTS:
        return "", ()
    return parts[1], tuple(parts[2:-1])


def test_every_resource_has_a_description(manifest) -> None:
    violations = []
    for node in ours(manifest["nodes"], "model", "seed", "snapshot"):
        if not described(node):
            violations.append(
                f"{node['resource_type']} {node['name']} ({node['original_file_path']}): "
                "no description"
            )
    for source in ours(manifest["sources"]):
        where = f"({source['original_file_path']})"
        if not described(source, "source_description"):
            violations.append(f"source {source['source_name']} {where}: no description")
        if not described(source):
            violations.append(
                f"source table {source['source_name']}.{source['name']} {where}: no description"
            )
    for unit_test in ours(manifest["unit_tests"]):
        if not described(unit_test):
            violations.append(
                f"unit test {unit_test['name']} ({unit_test['original_file_path']}): no description"
            )
    for exposure in ours(manifest["exposures"]):
        if not described(exposure):
            violations.append(
                f"exposure {exposure['name']} ({exposure['original_file_path']}): no description"
            )
    assert_no_violations(
        "Every model, seed, snapshot, source, unit test and exposure has a description",
        violations,
    )


def test_every_macro_is_documented_in_a_macros_yml(manifest) -> None:
    macros = ours(manifest["macros"])
    names_by_file = defaultdict(set)
    for macro in macros:
        names_by_file[macro["original_file_path"]].add(macro["name"])
    violations = []
    for macro in macros:
        name, path = macro["name"], macro["original_file_path"]
        prefix, _, dispatched = name.partition("__")
        if prefix in DISPATCH_PREFIXES and dispatched in names_by_file[path]:
            continue  # a dispatch implementation: documented with the macro it implements
        if not described(macro):
            violations.append(f"macro {name} ({path}): no description")
        elif path.startswith("macros/") and PurePosixPath(patch_file(macro) or "").name != (
            "_macros.yml"
        ):
            violations.append(f"macro {name} ({path}): documented outside a _macros.yml")
    if not any((PROJECT_DIR / "macros").rglob("_macros.yml")):
        violations.append("macros/: no _macros.yml")
    assert_no_violations("Every macro has a description (macros/: in _macros.yml)", violations)


def test_every_model_column_has_a_description(manifest) -> None:
    violations = []
    for model in ours(manifest["nodes"], "model"):
        if not model["columns"]:
            violations.append(f"model {model['name']}: documents no column")
        for column in model["columns"].values():
            if not described(column):
                violations.append(f"model {model['name']}: column {column['name']} undescribed")
    assert_no_violations("Every column of every model has a description", violations)


def test_every_mart_has_an_enforced_contract(manifest) -> None:
    """The marts are SPEC.md's tables: public, and dbt checks their columns and types before
    writing them."""
    violations = []
    for model in ours(manifest["nodes"], "model"):
        if model_place(model)[0] != "marts":
            continue
        config = model["config"]
        if model["access"] != "public":
            violations.append(f"model {model['name']}: access {model['access']}, not public")
        if not config["contract"]["enforced"]:
            violations.append(f"model {model['name']}: contract not enforced")
        if config["materialized"] == "incremental" and config["on_schema_change"] not in (
            "append_new_columns",
            "fail",
        ):
            violations.append(
                f"model {model['name']}: on_schema_change {config['on_schema_change']}"
            )
        for column in model["columns"].values():
            if not column.get("data_type"):
                violations.append(
                    f"model {model['name']}: column {column['name']} has no data_type"
                )
    assert_no_violations("Every mart has an enforced contract", violations)


def test_models_are_named_and_placed_for_their_layer(manifest) -> None:
    violations = []
    for model in ours(manifest["nodes"], "model"):
        name, path = model["name"], model["original_file_path"]
        layer, folders = model_place(model)
        if layer not in LAYERS:
            violations.append(f"model {name} ({path}): not under {'/, '.join(LAYERS)}/")
        elif layer == "staging":
            if len(folders) != 1:
                violations.append(f"model {name} ({path}): not in a staging/<source>/ folder")
            elif not re.fullmatch(rf"stg_{re.escape(folders[0])}__(?!.*__)[a-z0-9_]*s", name):
                violations.append(f"model {name} ({path}): not named stg_{folders[0]}__<entity>s")
        elif layer == "intermediate":
            if len(folders) != 1:
                violations.append(f"model {name} ({path}): not in an intermediate/<area>/ folder")
            if not name.startswith("int_") or "__" in name:
                violations.append(f"model {name} ({path}): not named int_<entity>s_<verb>s")
    assert_no_violations("Models are named and placed for their layer", violations)


def test_every_model_has_a_unique_key_test(manifest) -> None:
    unique, not_null, combination = defaultdict(set), defaultdict(set), set()
    for test in ours(manifest["nodes"], "test"):
        metadata = test.get("test_metadata") or {}
        model = test.get("attached_node")
        if not model or metadata.get("namespace") not in (None, PACKAGE):
            continue
        if metadata.get("name") == "unique":
            unique[model].add(test["column_name"])
        elif metadata.get("name") == "not_null":
            not_null[model].add(test["column_name"])
        elif metadata.get("name") == "table_checks":
            not_null[model].update(metadata["kwargs"].get("not_null") or ())
            for key in metadata["kwargs"].get("unique") or ():
                if len(key) == 1:
                    unique[model].update(key)
                else:
                    combination.add(model)
    for model in ours(manifest["nodes"], "model"):
        not_null[model["unique_id"]].update(
            name
            for name, column in model["columns"].items()
            if any(c["type"] == "not_null" for c in column.get("constraints") or ())
        )
    violations = [
        f"model {model['name']}: no unique + not_null column and no multi-column unique key"
        for model in ours(manifest["nodes"], "model")
        if model["unique_id"] not in combination
        and not unique[model["unique_id"]] & not_null[model["unique_id"]]
    ]
    assert_no_violations("Every model has a unique key test", violations)


def test_each_macro_file_defines_one_macro_named_after_it(manifest) -> None:
    names_by_file = defaultdict(set)
    for macro in ours(manifest["macros"]):
        names_by_file[macro["original_file_path"]].add(macro["name"])
    violations = []
    files = sorted((PROJECT_DIR / "macros").rglob("*.sql"))
    assert files
    for file in files:
        path = file.relative_to(PROJECT_DIR).as_posix()
        names = names_by_file[path]
        if file.stem not in names:
            violations.append(f"{path}: defines no macro {file.stem} (defines {sorted(names)})")
        allowed = {file.stem} | {f"{prefix}__{file.stem}" for prefix in DISPATCH_PREFIXES}
        for extra in sorted(names - allowed):
            violations.append(f"{path}: also defines macro {extra}")
    assert_no_violations("One macro per file, named after the file", violations)


def test_every_model_folder_has_one_models_yml(manifest) -> None:
    models_by_folder = defaultdict(list)
    for model in ours(manifest["nodes"], "model"):
        models_by_folder[PurePosixPath(model["original_file_path"]).parent].append(model)
    violations = []
    for folder, models in sorted(models_by_folder.items()):
        ymls = sorted(path.name for path in (PROJECT_DIR / folder).glob("_*__models.yml"))
        if len(ymls) != 1:
            violations.append(f"{folder}/: {len(ymls)} _*__models.yml files {ymls}, not one")
            continue
        for model in models:
            if patch_file(model) != f"{folder}/{ymls[0]}":
                where = f"in {patch_file(model)}" if patch_file(model) else "nowhere"
                violations.append(
                    f"model {model['name']}: documented {where}, not in {folder}/{ymls[0]}"
                )
    assert_no_violations("One _*__models.yml per model folder, documenting its models", violations)


def test_every_sql_macro_is_rendered_for_the_linter(manifest) -> None:
    """sqlfluff skips macro files, so a macro's SQL is linted where a node renders it: a model,
    or an analysis of analyses/macro_sql. Every macro that renders a statement (named `*_sql`,
    or a generic test) must be rendered by one."""
    rendered = set()
    for node in ours(manifest["nodes"], "model", "analysis"):
        if node["resource_type"] == "model" or node["original_file_path"].startswith(
            "analyses/macro_sql/"
        ):
            rendered.update(node["depends_on"]["macros"])
    violations = []
    for macro in ours(manifest["macros"]):
        name, path = macro["name"], macro["original_file_path"]
        renders_sql = name.endswith("_sql") or path.startswith("tests/generic/")
        if path.startswith("macros/dbt_spark_overrides/") or name.startswith("get_incremental_"):
            continue  # dbt-spark's own SQL, and strategies built on the renderers they call
        if renders_sql and macro["unique_id"] not in rendered:
            violations.append(f"macro {name} ({path}): no model or analyses/macro_sql renders it")
    assert_no_violations("Every SQL macro is rendered where sqlfluff lints it", violations)
