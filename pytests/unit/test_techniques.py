"""The technique of a mart's run, chosen by cost (profile_lake.techniques)."""

from __future__ import annotations

import pytest

from profile_lake.techniques import (
    ADAPTIVE_EXECUTION,
    CODEGEN_MAX_INTERPRETED_BYTES,
    FILE_SCAN_MIN_PARTITIONS,
    KEYS,
    MB,
    ONE_TASK_MAX_BYTES,
    QUICK_JIT_OPTIONS,
    SHUFFLE_PARTITIONS,
    SNAPSHOT_PARTITIONS,
    TENANTS,
    WHOLE,
    WHOLE_MAX_BYTES,
    WHOLE_MIN_CHANGED_SHARE,
    CodeGenerationError,
    TableCost,
    TaskPartitionsError,
    Technique,
    TechniqueError,
    choose_code_generation,
    choose_task_partitions,
    choose_technique,
    code_generation_setting,
    forced_technique,
    partition_setting,
    technique_said,
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
    assert "changed since its last run" in chosen.reason


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


def test_small_tables_are_read_whole_even_where_the_tenants_written_are_known() -> None:
    """On small tables a tenant filter costs more (a file-skipping job per scan) than it saves."""
    small = [TableCost("s", MB, 10)]
    target = TableCost("m", MB, tenant_count=8)
    assert choose_technique("auto", target, small, frozenset({"acme"})).name == WHOLE


def test_a_large_mart_recomputes_whole_the_few_tenants_written() -> None:
    """Tenants that hold at most the threshold between them are read whole; past it, the
    changed keys, unless most of those tenants' bytes changed."""
    big = 4 * WHOLE_MAX_BYTES
    sources = [TableCost("s", big, MB)]
    target = TableCost("m", big, tenant_count=40)
    chosen = choose_technique("auto", target, sources, frozenset({"globex", "acme"}))
    assert (chosen.name, chosen.tenants) == (TENANTS, ("acme", "globex"))
    assert chosen.recomputes_whole
    assert "the tenants written about 25.6 MB" in chosen.reason
    assert chosen.reason.endswith("the 2 tenants its inputs wrote (acme, globex)")
    assert chosen.as_dict() == {
        "name": TENANTS,
        "reason": chosen.reason,
        "tenants": ["acme", "globex"],
    }
    many = frozenset(f"t{number}" for number in range(20))
    assert choose_technique("auto", target, sources, many).name == KEYS
    churned = [TableCost("s", big, big // 3)]  # a third of all: most of those 20 tenants' bytes
    by_share = choose_technique("auto", target, churned, many)
    assert by_share.name == TENANTS and "of the written tenants' bytes changed" in by_share.reason
    assert choose_technique("auto", TableCost("m", big), sources, frozenset({"a"})).name == KEYS


def test_most_bytes_new_recomputes_the_tenants_written_where_known() -> None:
    big = 4 * WHOLE_MAX_BYTES
    sources = [TableCost("s", big, big)]
    assert choose_technique("auto", TableCost("m", big), sources).name == WHOLE
    nothing = choose_technique("auto", TableCost("m", big), sources, frozenset())
    assert (nothing.name, nothing.tenants) == (TENANTS, ())
    assert nothing.reason.endswith("its inputs wrote no tenant's rows")


def test_forced_techniques_and_tenants_unknown() -> None:
    few = [TableCost("s", WHOLE_MAX_BYTES, 1)]
    assert choose_technique(WHOLE, TableCost("m", 1), few, frozenset({"a"})).name == WHOLE
    forced = choose_technique(TENANTS, TableCost("m", 1), [TableCost("s", 1)])
    assert forced.name == WHOLE and "not known" in forced.reason
    known = choose_technique(TENANTS, TableCost("m", 1), [TableCost("s", 1)], frozenset({"a"}))
    assert (known.name, known.tenants) == (TENANTS, ("a",))
    assert known.reason == "forced by var mart_technique; the tenant its inputs wrote (a)"


def test_the_run_history_message_says_the_technique_and_why() -> None:
    from dbt.adapters.profile_lake_spark.impl import with_technique

    chosen = Technique(TENANTS, "most bytes are new; the tenant its inputs wrote (acme)", ("acme",))
    message = with_technique("OK", chosen.describe())
    assert technique_said(message) == (TENANTS, chosen.reason)
    assert technique_said("skipped: nothing it reads changed") is None
    assert technique_said(None) is None


def test_an_unknown_technique_says_what_to_use() -> None:
    assert forced_technique(None) == "auto"
    with pytest.raises(TechniqueError, match=r"auto .* keys, tenants or whole"):
        forced_technique("fast")


def test_code_generation_is_off_on_a_small_lake_and_on_past_the_threshold() -> None:
    small = choose_code_generation("auto", CODEGEN_MAX_INTERPRETED_BYTES)
    assert not small.on
    assert small.spark_settings() == {
        "spark.sql.codegen.wholeStage": "false",
        "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    }
    large = choose_code_generation("auto", CODEGEN_MAX_INTERPRETED_BYTES + 1)
    assert large.on
    assert large.spark_settings()["spark.sql.codegen.factoryMode"] == "FALLBACK"
    assert "plans compiled" in large.reason


def test_interpreted_plans_run_in_a_driver_with_the_quick_compiler_alone() -> None:
    off = choose_code_generation("auto", 1_000)
    assert off.driver_java_options("-Xss16m") == "-Xss16m " + " ".join(QUICK_JIT_OPTIONS)
    # what the options already set stands: a compiler level, a garbage collector
    chosen = "-Xss16m -XX:TieredStopAtLevel=4 -XX:+UseParallelGC"
    assert off.driver_java_options(chosen) == chosen + " -XX:ReservedCodeCacheSize=512m"
    assert off.driver_java_options("-XX:-UseSerialGC").split().count("-XX:+UseSerialGC") == 0
    on = choose_code_generation("auto", CODEGEN_MAX_INTERPRETED_BYTES + 1)
    assert on.driver_java_options("-Xss16m") == "-Xss16m"


def test_code_generation_stays_on_when_the_lake_size_is_unknown_or_set() -> None:
    assert choose_code_generation("auto", None).on
    assert choose_code_generation("true", 0).on
    assert not choose_code_generation("false", 10 * CODEGEN_MAX_INTERPRETED_BYTES).on


def test_a_code_generation_setting_outside_the_three_stops_the_run() -> None:
    assert code_generation_setting(None) == "auto"
    assert code_generation_setting(" TRUE ") == "true"
    with pytest.raises(CodeGenerationError, match="use auto"):
        code_generation_setting("yes")


def test_a_small_lake_takes_one_task_and_a_large_one_a_task_per_core() -> None:
    auto = {SHUFFLE_PARTITIONS: "auto", SNAPSHOT_PARTITIONS: "auto"}
    small = choose_task_partitions(auto, ONE_TASK_MAX_BYTES)
    assert small.counts == {SHUFFLE_PARTITIONS: 1, SNAPSHOT_PARTITIONS: 1}
    assert "one task" in small.reason
    # one task a stage leaves adaptive execution nothing to merge or split; a scan is one task
    assert small.spark_settings()[ADAPTIVE_EXECUTION] == "false"
    assert small.spark_settings()[FILE_SCAN_MIN_PARTITIONS] == "1"
    large = choose_task_partitions(auto, ONE_TASK_MAX_BYTES + 1)
    assert large.spark_settings() == {SHUFFLE_PARTITIONS: "4", SNAPSHOT_PARTITIONS: "2"}
    assert choose_task_partitions(auto, None).counts == large.counts
    assert ADAPTIVE_EXECUTION not in choose_task_partitions(auto, None).spark_settings()
    assert FILE_SCAN_MIN_PARTITIONS not in large.spark_settings()
    # a number set stands, whatever the size, and adaptive execution is the profile's
    mixed = choose_task_partitions({**auto, SHUFFLE_PARTITIONS: "8"}, 10)
    assert mixed.counts == {SHUFFLE_PARTITIONS: 8, SNAPSHOT_PARTITIONS: 1}
    assert ADAPTIVE_EXECUTION not in mixed.spark_settings()


def test_a_task_count_setting_is_auto_or_a_whole_number() -> None:
    assert partition_setting(SHUFFLE_PARTITIONS, None) == "auto"
    assert partition_setting(SHUFFLE_PARTITIONS, " 6 ") == "6"
    for value in ("0", "-2", "many", "1.5"):
        with pytest.raises(TaskPartitionsError, match="PROFILE_LAKE_SHUFFLE_PARTITIONS is"):
            partition_setting(SHUFFLE_PARTITIONS, value)
