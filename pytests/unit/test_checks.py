"""The scope of data tests on incremental runs (profile_lake.checks)."""

from datetime import UTC, datetime, timedelta

import pytest

from profile_lake.change_feed import Commit
from profile_lake.checks import (
    CHECK_ALL,
    CHECK_NONE,
    ChangesThisRun,
    ChecksScopeError,
    RowsThisRun,
    RunRows,
    Scope,
    changes_view_name,
    checks_only_written_rows,
    find_marker,
    history_reaches_back,
    key_scope_sql,
    parse_timestamp,
    replace_marker,
    scope_from_history,
    scoped_sql,
    whole_table_rows,
    written_rows_sql,
)

STARTED = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


def commit(version: int, minutes: float, operation: str = "MERGE") -> Commit:
    return Commit(version, operation, STARTED + timedelta(minutes=minutes))


def test_a_where_config_names_the_batch_and_tenant_columns_of_rows_this_run() -> None:
    assert find_marker("rows_this_run()") == RowsThisRun("ingest_batch_id", "tenant_id")
    assert find_marker("is_accepted and rows_this_run( 'last_ingest_batch_id' )") == RowsThisRun(
        "last_ingest_batch_id", "tenant_id"
    )
    assert find_marker("rows_this_run('batch', 'org_id')") == RowsThisRun("batch", "org_id")
    assert find_marker("is_accepted") is None
    assert find_marker(None) is None


@pytest.mark.parametrize(
    "where", ["rows_this_run(ingest_batch_id)", "rows_this_run", "rows_this_run('a b')"]
)
def test_a_malformed_rows_this_run_says_how_to_write_it(where: str) -> None:
    with pytest.raises(ChecksScopeError, match="single quotes"):
        find_marker(where)


def test_a_where_config_may_ask_for_the_rows_the_change_feed_shows_written() -> None:
    assert find_marker("changes_this_run()") == ChangesThisRun()
    assert find_marker("is_live and changes_this_run( )") == ChangesThisRun()


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("changes_this_run('profile_id')", "no arguments"),
        ("changes_this_run", "no arguments"),
        ("rows_this_run() and changes_this_run()", "not both"),
    ],
)
def test_a_malformed_changes_this_run_says_how_to_write_it(where: str, message: str) -> None:
    with pytest.raises(ChecksScopeError, match=message):
        find_marker(where)


def test_replacing_the_marker_keeps_the_other_conditions() -> None:
    assert replace_marker("is_accepted and rows_this_run()", "false") == "is_accepted and (false)"
    assert replace_marker("changes_this_run() and x > 0", "true") == "(true) and x > 0"


@pytest.mark.parametrize(
    ("command", "full_refresh", "full_checks", "scoped"),
    [
        ("build", False, False, True),
        ("build", False, "false", True),
        ("build", True, False, False),
        ("build", False, True, False),
        ("build", False, "true", False),
        ("test", False, False, False),
        (None, False, False, False),
    ],
)
def test_only_incremental_builds_check_only_what_they_wrote(
    command: str | None, full_refresh: bool, full_checks: object, scoped: bool
) -> None:
    assert checks_only_written_rows(command, full_refresh, full_checks) is scoped


def test_the_newest_history_entries_suffice_unless_all_are_the_runs() -> None:
    assert history_reaches_back([], 20, STARTED)
    assert history_reaches_back([STARTED + timedelta(minutes=1)] * 3, 20, STARTED)
    assert history_reaches_back(
        [STARTED + timedelta(minutes=1), STARTED - timedelta(1)], 2, STARTED
    )
    assert not history_reaches_back([STARTED + timedelta(minutes=1)] * 2, 2, STARTED)


def test_a_table_the_run_did_not_write_is_not_checked() -> None:
    assert scope_from_history([], STARTED) == CHECK_NONE
    assert scope_from_history([commit(4, -5)], STARTED) == CHECK_NONE


def test_a_table_the_run_wrote_is_checked_past_the_version_before_its_first_commit() -> None:
    history = [commit(7, 2), commit(5, -1), commit(6, 1, "WRITE")]
    assert scope_from_history(history, STARTED) == Scope("since", 5, 7)


@pytest.mark.parametrize(
    "history",
    [
        [commit(0, 1, "CREATE OR REPLACE TABLE AS SELECT")],
        [commit(3, 1, "CREATE OR REPLACE TABLE AS SELECT"), commit(2, -3)],
        [commit(3, 1, "MERGE"), commit(4, 2, "REPLACE TABLE AS SELECT")],
    ],
)
def test_a_table_the_run_created_or_replaced_is_checked_whole(history: list[Commit]) -> None:
    assert scope_from_history(history, STARTED) == CHECK_ALL


def test_the_predicate_of_written_rows_is_per_tenant_and_keeps_rows_without_a_batch() -> None:
    marker = RowsThisRun("ingest_batch_id", "tenant_id")
    sql = written_rows_sql(marker, Scope("since", 5), {"acme": 7, "o'hara": 3, "": 2})
    assert sql == (
        "ingest_batch_id is null or ingest_batch_id > case coalesce(cast(tenant_id as string), '') "
        "when '' then 2 when 'acme' then 7 when 'o\\'hara' then 3 else -1 end"
    )
    assert written_rows_sql(marker, Scope("since", 0), {}) == (
        "ingest_batch_id is null or ingest_batch_id > -1"
    )
    assert written_rows_sql(marker, CHECK_ALL, {"acme": 7}) == "true"
    assert written_rows_sql(marker, CHECK_NONE, {"acme": 7}) == "false"


def test_a_uniqueness_test_sees_every_row_sharing_a_key_with_the_runs_rows() -> None:
    where = "is_accepted and rows_this_run()"
    run_rows = RunRows("lake.t", "ingest_batch_id > 4")
    sql = key_scope_sql("lake.t", where, run_rows, ["source_file", "line_number"])
    assert (
        "from (select * from lake.t as table_rows where is_accepted and (true)) as all_rows" in sql
    )
    assert (
        "(select distinct source_file, line_number from lake.t as table_rows "
        "where is_accepted and (ingest_batch_id > 4)) as run_keys" in sql
    )
    assert "all_rows.source_file <=> run_keys.source_file and" in sql
    assert sql.endswith(") dbt_subquery")
    with pytest.raises(ChecksScopeError):
        key_scope_sql("lake.t", where, run_rows, [])


@pytest.mark.parametrize("scope", [CHECK_ALL, CHECK_NONE])
def test_a_uniqueness_test_of_every_row_or_none_reads_the_table_once(scope: Scope) -> None:
    """The key-widened subquery over every row is every row; over none, none."""
    where = "is_accepted and rows_this_run()"
    run_rows = whole_table_rows("lake.t", scope)
    sql = key_scope_sql("lake.t", where, run_rows, ["source_file", "line_number"])
    assert sql == scoped_sql(where, run_rows)
    assert sql.count("lake.t") == 1 and "join" not in sql


def test_a_uniqueness_test_reads_the_runs_keys_from_its_changes_and_collisions_from_the_table():
    view = changes_view_name("lake.t")
    sql = key_scope_sql("lake.t", "changes_this_run()", RunRows(view, "true"), ["k"])
    assert "from (select * from lake.t as table_rows where (true)) as all_rows" in sql
    assert f"(select distinct k from {view} as table_rows where (true)) as run_keys" in sql


def test_the_filtered_subquery_aliases_the_table_before_its_where() -> None:
    # Spark reads `from t where (true)` as the table alias `where` with a column list
    assert scoped_sql("rows_this_run()", RunRows("lake.t", "false")) == (
        "(select * from lake.t as table_rows where (false)) dbt_subquery"
    )


def test_the_runs_changes_are_read_from_a_session_view_named_after_the_table() -> None:
    assert changes_view_name("`lake_marts`.`profiles`") == "checks__lake_marts_profiles__changes"
    assert scoped_sql("changes_this_run()", RunRows(changes_view_name("m.p"), "true")) == (
        "(select * from checks__m_p__changes as table_rows where (true)) dbt_subquery"
    )


def test_scopes_without_a_feed_read_check_every_row_or_none() -> None:
    assert whole_table_rows("lake.t", CHECK_ALL) == RunRows("lake.t", "true")
    assert whole_table_rows("lake.t", CHECK_NONE) == RunRows("lake.t", "false")
    assert whole_table_rows("lake.t", CHECK_ALL, "feed off").fallback_reason == "feed off"


def test_run_started_at_is_read_as_utc() -> None:
    assert parse_timestamp("2026-11-26T12:00:00") == STARTED
    assert parse_timestamp("2026-11-26T13:00:00+01:00") == STARTED
