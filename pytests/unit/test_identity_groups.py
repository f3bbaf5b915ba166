"""The per-tenant pandas functions behind the identity Python models (no Spark session)."""

from __future__ import annotations

import pandas as pd

from profile_lake.identity import resolve_renames
from profile_lake.spark.identity_graph import _union_find_group
from profile_lake.spark.identity_renames import _resolve_tenant

COLUMNS = ["tenant_id", "kind", "from_id", "to_id", "version_micros", "seq"]


def _frame(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=COLUMNS)


def _changed(frame: pd.DataFrame) -> dict[str, str]:
    result = _resolve_tenant(7)(frame)
    assert set(result["ingest_batch_id"]) <= {7}
    return dict(zip(result["identity_id"], result["canonical_id"], strict=True))


def test_first_run_returns_every_endpoint() -> None:
    frame = _frame([("t", "new", "a", "b", 1, 0), ("t", "new", "b", "c", 2, 0)])
    assert _changed(frame) == {"a": "c", "b": "c", "c": "c"}


def test_newer_renames_fold_onto_the_stored_map_and_return_only_changes() -> None:
    stored = [("t", "current", i, c, 0, 0) for i, c in {"a": "c", "b": "c", "c": "c"}.items()]
    frame = _frame(
        [
            ("t", "applied", "a", "b", 1, 0),
            ("t", "applied", "b", "c", 2, 0),
            *stored,
            ("t", "new", "x", "y", 3, 0),
        ]
    )
    assert _changed(frame) == {"x": "y", "y": "y"}


def test_a_late_rename_replays_the_whole_history() -> None:
    applied = [((1, 0), "c", "d"), ((2, 0), "b", "c"), ((3, 0), "a", "b")]
    stored = resolve_renames(applied)
    frame = _frame(
        [
            *[("t", "applied", f, to, v[0], v[1]) for v, f, to in applied],
            *[("t", "current", i, c, 0, 0) for i, c in stored.items()],
            ("t", "new", "x", "a", 0, 0),  # executed before everything applied
        ]
    )
    assert _changed(frame) == {"x": "b"}


def test_union_find_group_labels_every_node_with_its_component_minimum() -> None:
    frame = pd.DataFrame(
        {"tenant_id": ["t"] * 4, "src": ["c", "b", "z", "q"], "dst": ["b", "a", "z", "c"]}
    )
    result = _union_find_group(frame)
    assert dict(zip(result["identity_id"], result["profile_id"], strict=True)) == {
        "a": "a",
        "b": "a",
        "c": "a",
        "q": "a",
        "z": "z",
    }


def test_the_driver_fold_equals_the_pandas_groups_tenant_by_tenant() -> None:
    from profile_lake.spark.identity_renames import fold_rows_by_tenant

    rows = [
        ("t1", "applied", "a", "b", 1, 0),
        *[("t1", "current", i, "b", 0, 0) for i in ("a", "b")],
        ("t1", "new", "b", "c", 2, 0),
        ("t2", "new", "x", "y", 5, 0),
        ("t2", "new", "y", "x", 6, 0),  # a cycle: both end on x
        ("t3", "current", "p", "q", 0, 0),  # a tenant without new renames returns nothing
    ]
    found = fold_rows_by_tenant(rows, 7)
    expected = [
        (tenant, identity, canonical, 7)
        for tenant in ("t1", "t2")
        for identity, canonical in _changed(_frame([r for r in rows if r[0] == tenant])).items()
    ]
    assert sorted(found) == sorted(expected)
    assert {(t, i): c for t, i, c, _ in found} == {
        ("t1", "a"): "c",
        ("t1", "b"): "c",
        ("t1", "c"): "c",
        ("t2", "x"): "x",
        ("t2", "y"): "x",
    }
