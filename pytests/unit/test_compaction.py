"""Which partitions a run compacts after writing a table, and the OPTIMIZE it runs."""

from __future__ import annotations

import pytest

from profile_lake.compaction import (
    MAX_SMALL_FILES,
    SMALL_FILE_BYTES,
    CompactionError,
    DataFile,
    data_file,
    max_small_files_setting,
    optimize_statement,
    partition_predicate,
    partitions_to_compact,
    plan_compaction,
)

SMALL = 1024
BIG = SMALL_FILE_BYTES


def files(tenant: str | None, count: int, size: int = SMALL) -> list[DataFile]:
    return [data_file({"tenant_id": tenant}, size) for _ in range(count)]


def test_a_partition_is_due_at_the_limit_of_small_files() -> None:
    table = files("acme", 3) + files("globex", 2) + files("initech", 2, BIG)
    assert partitions_to_compact(table, 3, None) == {(("tenant_id", "acme"),): 3}
    assert partitions_to_compact(table, 2, None) == {
        (("tenant_id", "acme"),): 3,
        (("tenant_id", "globex"),): 2,
    }
    # big files do not count: a partition laid out in a few big files stays as it is
    assert partitions_to_compact(files("initech", 40, BIG), 2, None) == {}


def test_a_run_of_some_tenants_compacts_their_partitions_only() -> None:
    table = files("acme", 4) + files("globex", 4)
    assert list(partitions_to_compact(table, 4, ["globex"])) == [(("tenant_id", "globex"),)]
    assert partitions_to_compact(table, 4, []) == {}
    # a table not partitioned by tenant (only appended to by such runs) is compacted whole
    plain = [data_file({}, SMALL) for _ in range(4)]
    assert partitions_to_compact(plain, 4, ["globex"]) == {(): 4}


def test_the_statement_selects_the_due_partitions_and_keeps_the_z_order() -> None:
    two_columns = [
        (("change_date", "2026-12-01"), ("tenant_id", "acme")),
        (("change_date", None), ("tenant_id", "o'brien")),
    ]
    assert partition_predicate(two_columns) == (
        "(change_date = '2026-12-01' and tenant_id = 'acme') or "
        "(change_date is null and tenant_id = 'o\\'brien')"
    )
    assert optimize_statement("s.t", [(("tenant_id", "acme"),)], ["tenant_id", "id"]) == (
        "optimize s.t where (tenant_id = 'acme') zorder by (tenant_id, id)"
    )
    assert optimize_statement("s.t", [()], "id") == "optimize s.t zorder by (id)"
    assert optimize_statement("s.t", [()], None) == "optimize s.t"


def test_a_plan_says_what_it_compacts() -> None:
    assert plan_compaction("s.t", files("acme", 1), 2, None, None) is None
    plan = plan_compaction("s.t", files("acme", 5) + files(None, 2), 2, None, ["id"])
    assert plan is not None
    assert plan.statement == (
        "optimize s.t where (tenant_id = 'acme') or (tenant_id is null) zorder by (id)"
    )
    assert plan.describe() == "s.t: compacting 2 partitions of 5, 2 small files"


def test_the_setting_is_a_whole_number_of_at_least_two() -> None:
    assert max_small_files_setting(None) == MAX_SMALL_FILES
    assert max_small_files_setting(8) == 8
    assert max_small_files_setting("8") == 8
    for wrong in (1, 0, "many", True, 2.5, [4]):
        with pytest.raises(CompactionError, match="compaction_max_small_files"):
            max_small_files_setting(wrong)
