"""The technique of a mart's run, chosen by cost (profile_lake.techniques)."""

from __future__ import annotations

import pytest

from profile_lake.techniques import (
    KEYS,
    MB,
    WHOLE,
    WHOLE_MAX_BYTES,
    WHOLE_MIN_CHANGED_SHARE,
    TableCost,
    TechniqueError,
    choose_technique,
    forced_technique,
)


def test_small_tables_are_recomputed_whole() -> None:
    chosen = choose_technique("auto", TableCost("m", MB), [TableCost("s", 2 * MB, 10)])
    assert chosen.name == WHOLE
    assert "3.0 MB" in chosen.reason


def test_large_tables_with_few_changes_take_the_changed_keys() -> None:
    big = WHOLE_MAX_BYTES
    chosen = choose_technique("auto", TableCost("m", big), [TableCost("s", big, big // 100)])
    assert chosen.name == KEYS


def test_large_tables_whose_sources_mostly_changed_are_recomputed_whole() -> None:
    big = 4 * WHOLE_MAX_BYTES
    changed = int(big * WHOLE_MIN_CHANGED_SHARE) + 1
    chosen = choose_technique("auto", TableCost("m", big), [TableCost("s", big, changed)])
    assert chosen.name == WHOLE
    assert "new since its last run" in chosen.reason


def test_the_threshold_counts_the_mart_and_every_source() -> None:
    half = WHOLE_MAX_BYTES // 2
    sources = [TableCost("a", half), TableCost("b", half)]
    assert choose_technique("auto", TableCost("m", 0), sources).name == WHOLE
    assert choose_technique("auto", TableCost("m", 1), sources).name == KEYS


def test_an_unknown_size_keeps_the_changed_keys() -> None:
    chosen = choose_technique("auto", TableCost("m", None), [TableCost("s", 1)])
    assert chosen.name == KEYS
    assert "m" in chosen.reason


@pytest.mark.parametrize("forced", [KEYS, WHOLE])
def test_the_var_forces_a_technique(forced: str) -> None:
    small, big = TableCost("m", 1), TableCost("s", 100 * WHOLE_MAX_BYTES)
    assert choose_technique(forced_technique(forced), small, [big]).name == forced
    assert choose_technique(forced_technique(forced.upper()), small, [small]).name == forced


def test_an_unknown_technique_says_what_to_use() -> None:
    assert forced_technique(None) == "auto"
    with pytest.raises(TechniqueError, match=r"auto .* keys or whole"):
        forced_technique("fast")
