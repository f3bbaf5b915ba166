"""The keys an incremental mart recomputes (profile_lake.mart_keys): literals Delta can skip
files by when few, a semi-join with the cached keys when many, no filter on a full build."""

from __future__ import annotations

import pytest

from profile_lake.mart_keys import (
    RecomputeKeys,
    evaluated_keys,
    key_predicate,
    key_rows,
    keys_view_name,
    literal_predicate,
    merge_target_predicate,
    recompute_keys_kind,
    values_sql,
)

SQL = "select tenant_id, profile_id from changes"
COLUMNS = ("tenant_id", "profile_id")


def test_key_rows_are_distinct_sorted_and_leave_null_parts_out() -> None:
    rows = [("b", "2"), ("a", "1"), ("b", "2"), ("a", None), (None, "x")]

    assert key_rows(rows, COLUMNS) == (("a", "1"), ("b", "2"))


def test_a_key_row_of_the_wrong_width_is_refused() -> None:
    with pytest.raises(ValueError, match="2 values for the columns tenant_id"):
        key_rows([("a", "1")], ("tenant_id",))


def test_the_predicate_is_equalities_grouped_by_the_leading_column_never_an_in_list() -> None:
    predicate = literal_predicate(
        ["tenant_id", "primary_id"], [("acme", "p1"), ("acme", "p2"), ("globex", "q")]
    )

    assert predicate == (
        "((tenant_id = 'acme' and (primary_id = 'p1' or primary_id = 'p2'))"
        " or (tenant_id = 'globex' and primary_id = 'q'))"
    )
    assert " in " not in predicate


def test_one_key_is_one_conjunction_and_no_key_matches_nothing() -> None:
    assert (
        literal_predicate(["tenant_id", "id"], [("acme", "x")])
        == "(tenant_id = 'acme' and id = 'x')"
    )
    assert literal_predicate(["tenant_id", "id"], []) == "false"


def test_literals_are_quoted_as_sql_strings() -> None:
    predicate = literal_predicate(["tenant_id"], [("o'brien",)])

    assert predicate == "tenant_id = 'o\\'brien'"


def test_few_keys_are_literals_many_are_the_cached_view() -> None:
    few = evaluated_keys(COLUMNS, [("a", "1"), ("a", "2")], 2, "keys__v", SQL)
    many = evaluated_keys(COLUMNS, [("a", "1"), ("a", "2"), ("a", "3")], 2, "keys__v", SQL)

    assert few.kind == "literal" and few.rows == (("a", "1"), ("a", "2"))
    assert key_predicate(["tenant_id", "profile_id"], few).startswith(
        "(tenant_id = 'a' and (profile_id"
    )
    assert many.kind == "relation"
    assert key_predicate(["tenant_id", "profile_id"], many) == (
        "(tenant_id, profile_id) in (select tenant_id, profile_id from keys__v)"
    )


def test_a_filter_names_the_sources_own_columns_in_the_keys_order() -> None:
    keys = evaluated_keys(COLUMNS, [("a", "1")], 10, "keys__v", SQL)

    assert (
        key_predicate(["tenant_id", "primary_id"], keys) == "(tenant_id = 'a' and primary_id = '1')"
    )
    with pytest.raises(ValueError, match=r"the filter names tenant_id$"):
        key_predicate(["tenant_id"], keys)


def test_a_full_build_filters_nothing_and_its_keys_are_their_own_sql() -> None:
    keys = RecomputeKeys(recompute_keys_kind(incremental=False, evaluate=True), COLUMNS, SQL)

    assert keys.kind == "all"
    assert key_predicate(["tenant_id", "profile_id"], keys) == "true"
    assert keys.body_sql() == SQL


def test_keys_not_evaluated_beforehand_are_read_from_their_own_sql() -> None:
    keys = RecomputeKeys(recompute_keys_kind(incremental=True, evaluate=False), COLUMNS, SQL)

    assert keys.kind == "relation"
    assert (
        key_predicate(["tenant_id", "id"], keys)
        == f"(tenant_id, id) in (select tenant_id, profile_id from ({SQL}))"
    )
    assert keys.body_sql() == SQL


def test_the_body_of_evaluated_keys_selects_them_not_their_query() -> None:
    literal = evaluated_keys(COLUMNS, [("a", "1")], 10, "keys__v", SQL)
    cached = evaluated_keys(COLUMNS, [("a", "1"), ("a", "2")], 1, "keys__v", SQL)

    assert literal.body_sql() == "select tenant_id, profile_id from " + values_sql(
        COLUMNS, (("a", "1"),)
    )
    assert cached.body_sql() == "select tenant_id, profile_id from keys__v"


def test_no_key_is_an_empty_relation_of_the_keys_shape() -> None:
    assert values_sql(COLUMNS, ()) == (
        "(select cast(null as string) as tenant_id, cast(null as string) as profile_id where false)"
    )


def test_the_keys_round_trip_through_the_macros() -> None:
    keys = evaluated_keys(COLUMNS, [("a", "1")], 10, "keys__v", SQL)

    assert RecomputeKeys.from_dict(keys.as_dict()) == keys


def test_each_mart_and_key_set_has_its_own_view() -> None:
    assert keys_view_name("`spark_catalog`.`lake`.`profiles`", "touched_profiles") == (
        "keys__spark_catalog__lake__profiles__touched_profiles"
    )


def test_numbers_stay_numbers() -> None:
    rows = key_rows([("records", "a.jsonl", 7)], ("stream", "source_file", "ingest_batch_id"))

    assert rows == (("records", "a.jsonl", 7),)
    assert literal_predicate(["'records'", "source_file", "ingest_batch_id"], rows) == (
        "('records' = 'records' and (source_file = 'a.jsonl' and ingest_batch_id = 7))"
    )


def test_a_merge_of_literal_keys_reads_the_targets_files_of_those_keys_only() -> None:
    keys = evaluated_keys(COLUMNS, [("a", "1")], 10, "keys__v", SQL)
    tenants = evaluated_keys(("tenant_id",), [("a",)], 10, "keys__v", SQL)

    assert merge_target_predicate(keys, ["tenant_id", "profile_id"]) == (
        "(DBT_INTERNAL_DEST.tenant_id = 'a' and DBT_INTERNAL_DEST.profile_id = '1')"
    )
    # whole tenants: a prefix of the unique key
    assert merge_target_predicate(tenants, ["tenant_id", "identity_id"]) == (
        "DBT_INTERNAL_DEST.tenant_id = 'a'"
    )


def test_a_merge_of_other_or_cached_keys_takes_no_condition() -> None:
    keys = evaluated_keys(COLUMNS, [("a", "1")], 10, "keys__v", SQL)
    cached = evaluated_keys(COLUMNS, [("a", "1"), ("a", "2")], 1, "keys__v", SQL)

    assert merge_target_predicate(keys, ["tenant_id", "identity_id"]) is None
    assert merge_target_predicate(cached, ["tenant_id", "profile_id"]) is None
    assert merge_target_predicate(RecomputeKeys("all", COLUMNS, SQL), list(COLUMNS)) is None


def test_many_keys_of_a_tenant_are_a_search_tree_of_ranges() -> None:
    values = [f"p{number:02d}" for number in range(20)]
    predicate = literal_predicate(["id"], [(value,) for value in values])

    assert predicate.startswith("((id < 'p10' and ((id < 'p05' and (id = 'p00' or ")
    assert " in " not in predicate
    for value in values:
        assert f"id = '{value}'" in predicate
