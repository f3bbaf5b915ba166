"""Identity on real dbt, Spark and Delta: identity_map, profiles, segments and the index.

Two scenarios of the identity lake (conftest.py here says its runs), each on tenants of its
own (identity_landings.py):

* the identity scenario, one case per tenant of the repository's seed, in the lake's runs 1
  and 2 (the second on the distributed paths);
* the increments scenario, on copies of six of those tenants (`inc_acme` ...): the same two
  runs, then a run of two of its tenants only, a run of every tenant, a run with nothing new,
  a full refresh of the graph and a quiet month, each result against the union-find of its
  data.

Plus the Spark graph resolution and rename fold (both paths) against the pure union-find and
replay, on the shapes of the unit tests.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from datetime import datetime, timedelta

import pytest

from profile_lake.identity import components_union_find, resolve_renames
from pytests.integration.identity_lake.identity_landings import (
    IDENTITY_TENANTS,
    INCREMENTAL_RUNS,
    INCREMENTS_TENANTS,
    OLD,
    QUIET_MONTH_RUNS,
    RUN_1,
    RUN_2,
)

pytestmark = pytest.mark.integration


def _all_messages(stream: str, runs: list[dict]) -> list[dict]:
    return [message for run in runs for message in run[stream]]


def expected_identity_map(runs: list[dict]) -> dict[tuple[str, str], str]:
    """The pure rename replay per tenant over every identity seen."""
    by_tenant: dict[str, tuple[list, set]] = {}
    for message in _all_messages("id_mutations", runs):
        renames, _ = by_tenant.setdefault(message["tenant_id"], ([], set()))
        moment = datetime.fromisoformat(message["executed_ts"])
        micros = int(moment.timestamp()) * 1_000_000 + moment.microsecond
        renames.append(((micros, message["seq"]), message["from_id"], message["to_id"]))
    for message in _all_messages("records", runs):
        _, seen = by_tenant.setdefault(message["tenant_id"], ([], set()))
        seen.update([message["primary_id"], *message["related_ids"]])
    return {
        (tenant, identity): canonical
        for tenant, (renames, seen) in by_tenant.items()
        for identity, canonical in resolve_renames(renames, seen).items()
    }


def expected_profiles(runs: list[dict], identity_map: dict) -> dict[tuple[str, str], str]:
    """(tenant, canonical identity) -> profile_id, by union-find over live records."""
    live: dict[tuple[str, str], dict] = {}
    for message in sorted(
        _all_messages("records", runs),
        key=lambda m: (datetime.fromisoformat(m["event_ts"]), m["seq"]),
    ):
        key = (message["tenant_id"], message["record_id"])
        if message["op"] == "delete":
            live.pop(key, None)
        else:
            live[key] = message
    result = {}
    for tenant in {tenant for tenant, _ in live}:
        links, nodes = [], []
        for (record_tenant, _), message in live.items():
            if record_tenant != tenant:
                continue
            primary = identity_map[(tenant, message["primary_id"])]
            nodes.append(primary)
            links += [
                (primary, identity_map[(tenant, related)]) for related in message["related_ids"]
            ]
        for identity, profile in components_union_find(links, nodes).items():
            result[(tenant, identity)] = profile
    return result


def profiles_of(runs: list[dict], tenants: set[str]) -> dict[tuple[str, str], str]:
    found = expected_profiles(runs, expected_identity_map(runs))
    return {key: profile for key, profile in found.items() if key[0] in tenants}


@pytest.fixture(scope="module")
def increments(identity_lake) -> dict:
    """int_profile_identities_resolved after each of the increments scenario's runs: 1, 2,
    "3_scoped" (inc_acme and inc_globex), 3 (every tenant), "no_change", "full_refresh",
    "quiet_month"; each {"resolved": every tenant's rows, "version": its table version}."""
    return identity_lake.increments


def test_identity_map_equals_the_ordered_replay_in_both_runs(identity_lake) -> None:
    assert identity_lake.first["identity_map"] == expected_identity_map([RUN_1])
    assert identity_lake.second["identity_map"] == expected_identity_map([RUN_1, RUN_2])


def test_rename_chains_in_both_execution_orders_cycles_and_late_renames(identity_lake) -> None:
    first, second = identity_lake.first["identity_map"], identity_lake.second["identity_map"]
    # forwards: everything on the end of the chain
    assert {first[("acme", f"email:{x}@acme.test")] for x in "abcd"} == {"email:d@acme.test"}
    # backwards: each moved one step only
    assert [first[("globex", f"email:{x}@globex.test")] for x in "abc"] == [
        "email:b@globex.test",
        "email:c@globex.test",
        "email:d@globex.test",
    ]
    # cycle ends where the last rename sends it; a no-op moves nothing
    assert first[("initech", "email:a@initech.test")] == "email:a@initech.test"
    assert first[("initech", "email:b@initech.test")] == "email:a@initech.test"
    assert first[("initech", "crm:c")] == "crm:c"
    # late rename (executed first, arrived last): x -> a, then a -> b takes x along
    assert second[("globex", "email:x@globex.test")] == "email:b@globex.test"
    # a newer rename folds onto the chain; the duplicate changes nothing
    assert {second[("acme", f"email:{x}@acme.test")] for x in "abcde"} == {"email:e@acme.test"}


def test_records_keep_the_identities_they_arrived_with(identity_lake) -> None:
    records = identity_lake.second["records"]
    assert records[("wonka", "r1")]["primary_id"] == "email:old@w.test"
    assert records[("acme", "r1")]["primary_id"] == "email:a@acme.test"


def test_profiles_equal_union_find_over_live_records(identity_lake) -> None:
    for key, runs in (("first", [RUN_1]), ("second", [RUN_1, RUN_2])):
        found = getattr(identity_lake, key)["profile_identities"]
        assert found == expected_profiles(runs, expected_identity_map(runs)), key


def test_the_second_run_rewrote_only_the_touched_components(identity_lake) -> None:
    """Rows keep the watermarks of the run that last resolved their component: the second run
    resolved again every profile its records or renames touched, and nothing else."""
    first, second = identity_lake.first, identity_lake.second
    untouched = {
        key
        for key in second["resolved"]
        if key[0] in ("initech", "stark", "wayne") or key == ("wonka", "crm:w3")
    }
    for key, (profile, records_version, _) in second["resolved"].items():
        if key in untouched:
            assert second["resolved"][key] == first["resolved"][key], key
        else:
            assert records_version == second["records_version"], key
        assert profile == second["profile_identities"][key]
    assert {key for key in first["resolved"] if key[0] == "initech"} <= untouched


def test_a_later_record_merges_two_profiles(identity_lake) -> None:
    first = identity_lake.first["profile_identities"]
    second = identity_lake.second["profile_identities"]
    assert first[("umbrella", "email:p1@u.test")] != first[("umbrella", "email:p2@u.test")]
    members = ["email:p1@u.test", "email:p2@u.test", "cookie:q1", "cookie:q2", "crm:u3"]
    assert {second[("umbrella", identity)] for identity in members} == {"cookie:q1"}
    profile = identity_lake.second["profiles"][("umbrella", "cookie:q1")]
    assert profile["identities"] == sorted(members)
    assert profile["record_count"] == 4
    assert [name["name"] for name in profile["identity_names"]] == ["Alicia"]
    # r1 is a recent event; r2, r2b and r3 are profile records a month old
    assert profile["record_count_by_type"] == {"event": 1, "profile": 3}
    newest = profile["last_event_ts_by_type"]
    assert newest.keys() == {"event", "profile"}
    assert newest["event"] == profile["last_event_ts"] > newest["profile"]
    assert newest["profile"] >= profile["first_event_ts"]


def test_a_deleted_record_splits_a_profile(identity_lake) -> None:
    first = identity_lake.first["profile_identities"]
    second = identity_lake.second["profile_identities"]
    assert {first[("hooli", i)] for i in ("email:a@h.test", "email:b@h.test", "cookie:x")} == {
        "cookie:x"
    }
    assert second[("hooli", "email:a@h.test")] == "cookie:x"
    assert second[("hooli", "email:b@h.test")] == "email:b@h.test"


def test_a_rename_joins_profiles_at_read_time(identity_lake) -> None:
    first = identity_lake.first["profile_identities"]
    second = identity_lake.second["profile_identities"]
    assert first[("wonka", "email:old@w.test")] != first[("wonka", "email:new@w.test")]
    assert ("wonka", "email:old@w.test") not in second  # no longer canonical
    assert second[("wonka", "email:new@w.test")] == "cookie:w1"
    profile = identity_lake.second["profiles"][("wonka", "cookie:w1")]
    # the canonical identity's own name wins over the name of the identity renamed into it
    assert profile["identity_names"] == [{"identity_id": "email:new@w.test", "name": "Willy"}]
    assert profile["record_count"] == 2


def test_names_are_current_and_their_history_is_kept_across_runs(identity_lake, spark) -> None:
    lake = identity_lake.lake
    history = {
        (row["id"], row["name"], row["dbt_valid_to"] is None)
        for row in spark.table(lake.table("entity_names_snapshot")).collect()
    }
    assert {
        ("email:p1@u.test", "Alice", False),
        ("email:p1@u.test", "Alicia", True),
        ("email:old@w.test", "Old Willy", False),
        ("email:old@w.test", None, True),
    } <= history


def test_the_same_identity_in_two_tenants_never_joins_them(identity_lake) -> None:
    found = identity_lake.second["profile_identities"]
    assert {identity for tenant, identity in found if tenant == "stark"} == {
        "email:same@x.test",
        "cookie:s1",
    }
    assert found[("wayne", "email:same@x.test")] == "cookie:s1"
    assert found[("wayne", "cookie:w1")] == "cookie:s1"
    assert found[("stark", "email:same@x.test")] == "cookie:s1"
    assert ("stark", "cookie:w1") not in found


def test_segments_on_known_profiles(identity_lake) -> None:
    segments = identity_lake.second["segments"]
    assert segments[("umbrella", "cookie:q1")] == [
        "active_last_7_days",
        "events_but_no_orders_7d",
        "has_email",
        "multi_identity",
        "named",
        "repeat_records",
    ]
    assert segments[("hooli", "email:b@h.test")] == ["has_email"]
    assert segments[("wonka", "crm:w3")] == []
    assert segments[("wonka", "cookie:w1")] == [
        "active_last_7_days",
        "events_but_no_orders_7d",
        "has_email",
        "multi_identity",
        "named",
    ]
    assert segments.keys() == identity_lake.second["profiles"].keys()


def test_a_broken_segment_expression_fails_compilation_naming_it(identity_lake, capsys) -> None:
    lake = identity_lake.lake
    segments = [
        {"segment_id": "fine", "expression": "identity_count > 1"},
        {"segment_id": "broken_one", "expression": "no_such_column > 1"},
    ]
    run = lake.dbt(
        [
            "run-operation",
            "validate_segment_expressions",
            "--args",
            json.dumps({"segments": segments}),
        ],
        expect_pass=False,
    )
    assert "broken_one" in _dbt_failure_text(run, capsys)
    not_boolean = [{"segment_id": "counted", "expression": "identity_count + 1"}]
    run = lake.dbt(
        [
            "run-operation",
            "validate_segment_expressions",
            "--args",
            json.dumps({"segments": not_boolean}),
        ],
        expect_pass=False,
    )
    assert "'counted'" in _dbt_failure_text(run, capsys)


def _dbt_failure_text(run, capsys) -> str:
    captured = capsys.readouterr()
    return "\n".join([run.messages(), captured.out, captured.err])


def test_index_resolves_every_identity_seen_including_renamed_ones(identity_lake) -> None:
    second = identity_lake.second
    assert second["index"][("wonka", "email:old@w.test")] == "cookie:w1"
    assert second["index"][("globex", "email:x@globex.test")] == "cookie:g1"
    for (tenant, identity), profile in second["index"].items():
        canonical = second["identity_map"][(tenant, identity)]
        assert second["profile_identities"][(tenant, canonical)] == profile


def test_index_statistics_leave_one_or_two_files_per_key(identity_lake) -> None:
    """Delta skips a file when the key is outside its min/max of tenant_id or identity_id: with
    the sorted layout of a full build at most two files remain for any key (one, unless a file
    spans tenants). Incremental runs MERGE into new files; a full build of the index (what a
    nightly rebuild does; here with the graph's full refresh) lays it out again, with the same
    rows (the identity scenario's have not changed since its second run; the other scenarios'
    are between them in the layout)."""
    stats = identity_lake.index_files
    files = range(len(stats["path"]))
    assert len(files) > 5  # 4 rows per file

    def candidates(tenant: str, identity: str) -> int:
        return sum(
            stats["min.tenant_id"][i] <= tenant <= stats["max.tenant_id"][i]
            and stats["min.identity_id"][i] <= identity <= stats["max.identity_id"][i]
            for i in files
        )

    counts = [candidates(tenant, identity) for tenant, identity in identity_lake.second["index"]]
    assert max(counts) <= 2
    found = [tenant for tenant in identity_lake.index_tenants if tenant in IDENTITY_TENANTS]
    assert len(found) == len(identity_lake.second["index"])


def test_the_lookup_command_prints_the_profile_of_each_key(identity_lake, spark, tmp_path) -> None:
    """`profile-lake lookup` (the deltalake reader, no Spark) answers a key given on the command
    line and keys from a file, one JSON line each, in that order, with the profile the tables
    hold (read here through Spark); a key with no profile prints profile_id null, exit 1."""
    lake = identity_lake.lake
    keys = [
        ("wonka", "email:old@w.test"),
        ("umbrella", "crm:u3"),
        ("stark", "cookie:s1"),
        ("stark", "cookie:w1"),
    ]
    keys_file = tmp_path / "keys.csv"
    keys_file.write_text("tenant_id,identity_id\n" + "".join(f"{t},{i}\n" for t, i in keys[1:]))
    command = [sys.executable, "-m", "profile_lake.cli", "lookup", *keys[0], "--keys-file"]
    done = subprocess.run(
        [*command, str(keys_file)],
        env={**os.environ, "PROFILE_LAKE_HOME": str(lake.lake_home), **lake.env()},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr  # stark's cookie:w1 has no profile
    printed = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(p["tenant_id"], p["identity_id"], p["profile_id"]) for p in printed] == [
        ("wonka", "email:old@w.test", "cookie:w1"),
        ("umbrella", "crm:u3", "cookie:q1"),
        ("stark", "cookie:s1", "cookie:s1"),
        ("stark", "cookie:w1", None),
    ]
    assert printed[0]["record_count"] == 2

    def rows(table: str) -> list[dict]:
        return [row.asDict(recursive=True) for row in spark.table(lake.table(table)).collect()]

    index = {(row["tenant_id"], row["identity_id"]): row for row in rows("identity_index")}
    profiles = {(row["tenant_id"], row["profile_id"]): row for row in rows("profiles")}
    for found in printed[:3]:
        indexed = index[(found["tenant_id"], found["identity_id"])]
        assert found["canonical_id"] == indexed["canonical_id"]
        profile = profiles[(found["tenant_id"], indexed["profile_id"])]
        assert found["record_count"] == profile["record_count"]
        assert found["identities"] == profile["identities"]
        records = sorted(record["record_id"] for record in found["live_records"])
        assert records == sorted(record["record_id"] for record in profile["live_records"])
        assert found["record_count_by_type"] == profile["record_count_by_type"]
        assert found["last_event_ts_by_type"].keys() == profile["last_event_ts_by_type"].keys()


def test_the_second_run_took_the_distributed_path(identity_lake) -> None:
    assert identity_lake.contractions


# ---- the Spark graph resolution against the pure union-find ---------------------------------


def _graph_cases() -> dict[str, list[tuple[str, str]]]:
    rng = random.Random(7)
    nodes = [f"n{index:03d}" for index in range(120)]
    return {
        "random": [(rng.choice(nodes), rng.choice(nodes)) for _ in range(150)],
        "chain": [(f"c{index:03d}", f"c{index + 1:03d}") for index in range(60)],
        "reverse_chain": [(f"r{index + 1:03d}", f"r{index:03d}") for index in range(60)][::-1],
        "star": [("s999", f"s{index:03d}") for index in range(40)],
        "cycle": [(f"y{index}", f"y{(index + 1) % 9}") for index in range(9)],
        "self_links": [("z1", "z1"), ("z2", "z2"), ("z2", "z3")],
    }


@pytest.mark.parametrize(
    "paths",
    [
        {"fast_path_max_links": 10_000},
        # buckets of 16 links: several buckets per tenant and several passes
        {"fast_path_max_links": 0, "bucket_max_links": 16},
        {"fast_path_max_links": 0, "max_contraction_passes": 0},
    ],
    ids=["union_find", "contraction", "large_small_star"],
)
def test_spark_components_equal_union_find(spark, tmp_path, paths) -> None:
    from profile_lake.spark.identity_graph import resolve_components

    cases = _graph_cases()
    rows = [(tenant, a, b) for tenant, links in cases.items() for a, b in links]
    rows += [("random_twin", a, b) for a, b in cases["random"][:20]]  # same ids, other tenant
    links = spark.createDataFrame(rows, "tenant_id string, src string, dst string")
    # uncoalesced, the distributed path's sort numbers the identities over several range
    # partitions: the numbers must still follow the identities' order across them
    coalesce_setting = "spark.sql.adaptive.coalescePartitions.enabled"
    coalesce = spark.conf.get(coalesce_setting)
    spark.conf.set(coalesce_setting, "false")
    try:
        found = {
            (row["tenant_id"], row["identity_id"]): row["profile_id"]
            for row in resolve_components(links, tmp_path / "checkpoints", **paths).collect()
        }
    finally:
        spark.conf.set(coalesce_setting, coalesce)
    expected = {}
    for tenant in {tenant for tenant, _, _ in rows}:
        tenant_links = [(a, b) for t, a, b in rows if t == tenant]
        sources = [a for a, _ in tenant_links]
        for identity, profile in components_union_find(
            [(a, b) for a, b in tenant_links if a != b], sources
        ).items():
            expected[(tenant, identity)] = profile
    assert found == expected


# ---- the Spark rename fold (both paths) against the pure replay ------------------------------

RENAMES_SCHEMA = (
    "tenant_id string, from_id string, to_id string, executed_ts timestamp, seq int, "
    "ingest_batch_id bigint"
)
# per path, whether each batch's changed rows were folded in the driver (no pandas groups)
FOLDED_IN_DRIVER = {
    "driver": [True, True, True],
    "too_many_rows": [True, False, False],  # 30 rows: the first batch's 25 renames fit, alone
    "distributed": [False, False, False],
}


def _rename_batches() -> list[list[tuple[str, str, str, int, int]]]:
    """Three batches of (tenant, from, to, minute, seq) over a few identities: chains, cycles,
    no-ops, duplicates and renames executed before ones of an earlier batch."""
    rng = random.Random(11)
    identities = [f"id{index}" for index in range(8)]
    return [
        [
            (
                rng.choice(["t1", "t2", "t3"]),
                rng.choice(identities),
                rng.choice(identities),
                rng.randrange(100),
                rng.randrange(2),
            )
            for _ in range(25)
        ]
        for _ in range(3)
    ]


@pytest.mark.parametrize("path", list(FOLDED_IN_DRIVER))
def test_spark_rename_fold_equals_the_replay_after_each_batch(spark, path, capsys) -> None:
    from profile_lake.spark.identity_renames import MAP_SCHEMA, resolve_identity_renames

    driver_max_rows = {"driver": 200_000, "too_many_rows": 30, "distributed": 0}[path]
    history: list[tuple] = []
    stored: dict[tuple[str, str], str] = {}
    for batch, renames in enumerate(_rename_batches()):
        history += [
            (tenant, from_id, to_id, OLD + timedelta(minutes=minute), seq, batch)
            for tenant, from_id, to_id, minute, seq in renames
        ]
        stored_map = (
            spark.createDataFrame(
                [(*key, canonical, 0) for key, canonical in stored.items()], MAP_SCHEMA
            )
            if batch
            else None
        )
        changed = resolve_identity_renames(
            spark.createDataFrame(history, RENAMES_SCHEMA),
            stored_map,
            batch - 1,
            driver_max_rows=driver_max_rows,
        )
        changed.explain()
        distributed = "FlatMapGroupsInPandas" in capsys.readouterr().out
        assert distributed != FOLDED_IN_DRIVER[path][batch], batch
        for row in changed.collect():
            assert row["ingest_batch_id"] == batch
            stored[(row["tenant_id"], row["identity_id"])] = row["canonical_id"]
        expected = {
            (tenant, identity): canonical
            for tenant in {row[0] for row in history}
            for identity, canonical in resolve_renames(
                ((minute, seq), from_id, to_id)
                for (row_tenant, from_id, to_id, at, seq, _) in history
                if row_tenant == tenant
                for minute in [int(at.timestamp())]
            ).items()
        }
        assert stored == expected, batch


# ---- incremental resolution against a full recompute, over a sequence of runs ----------------


def _profiles(state: dict) -> dict[tuple[str, str], str]:
    return {key: profile for key, (profile, _, _) in state["resolved"].items()}


def of_tenants(found: dict, tenants: set[str]) -> dict:
    return {key: value for key, value in found.items() if key[0] in tenants}


def test_each_incremental_run_equals_the_union_find_of_its_data(increments) -> None:
    for number in (1, 2, 3):
        expected = profiles_of(INCREMENTAL_RUNS[:number], INCREMENTS_TENANTS)
        assert of_tenants(_profiles(increments[number]), INCREMENTS_TENANTS) == expected, number
    third = _profiles(increments[3])
    # the late renames split inc_globex's profile in run 2; b4 joined q1's and q2's in run 3
    assert _profiles(increments[2])[("inc_globex", "cookie:s2")] == "cookie:s2"
    assert third[("inc_globex", "cookie:s2")] == "cookie:s1"
    assert ("inc_initech", "email:g1@i.test") not in _profiles(increments[2])
    assert {key for key in third if key[0] == "inc_umbrella"} == {
        ("inc_umbrella", "email:d1@u.test"),
        ("inc_umbrella", "cookie:d2"),
    }


def test_a_scoped_run_resolves_its_tenants_only(increments) -> None:
    before, scoped = increments[2]["resolved"], increments["3_scoped"]["resolved"]
    in_scope = {"inc_acme", "inc_globex"}
    assert {k: v for k, v in scoped.items() if k[0] not in in_scope} == {
        k: v for k, v in before.items() if k[0] not in in_scope
    }
    assert of_tenants(_profiles(increments["3_scoped"]), in_scope) == (
        profiles_of(INCREMENTAL_RUNS, in_scope)
    )


def test_untouched_components_keep_their_rows_and_watermarks(increments) -> None:
    first = increments[1]["resolved"]
    for number in (2, 3):
        found = increments[number]["resolved"]
        assert of_tenants(found, {"inc_hooli"}) == of_tenants(first, {"inc_hooli"})
    # inc_initech: run 2 (g1 deleted) did not touch g3's profile; run 3's rename joined it to
    # g2's
    g3 = ("inc_initech", "email:g3@i.test")
    assert increments[2]["resolved"][g3] == first[g3]
    assert increments[3]["resolved"][g3][0] == "email:g2@i.test"


def test_a_run_with_nothing_new_writes_no_table_version(increments) -> None:
    assert increments["no_change"] == increments[3]


def test_a_quiet_month_resolves_the_changed_tenant_only(increments) -> None:
    """The other tenants' watermarks (every scenario's) are followed by inc_acme's month-old
    commits only, which Delta no longer reads a change feed from: their rows are passed over,
    not resolved whole (which would restamp them), and inc_acme's new records join its
    profiles."""
    found = increments["quiet_month"]["resolved"]
    assert of_tenants(_profiles(increments["quiet_month"]), INCREMENTS_TENANTS) == profiles_of(
        INCREMENTAL_RUNS + QUIET_MONTH_RUNS, INCREMENTS_TENANTS
    )
    before = increments["full_refresh"]["resolved"]
    assert {k: v for k, v in found.items() if k[0] != "inc_acme"} == {
        k: v for k, v in before.items() if k[0] != "inc_acme"
    }
    assert found[("inc_acme", "crm:a7")][0] == found[("inc_acme", "crm:a3")][0]


def test_a_full_refresh_of_a_selection_keeps_staging_new_files(increments) -> None:
    """The graph's full refresh left the staging models out: the landing tables are kept, so
    the records landed after it reach the graph (staged again from 0, their batch numbers would
    be at or below the staging models' watermarks, and skipped)."""
    resolved = increments["quiet_month"]["resolved"]
    assert {("inc_acme", "crm:a6"), ("inc_acme", "crm:a7")} <= resolved.keys()


def test_incremental_runs_equal_a_full_refresh(increments) -> None:
    """Every tenant's, the rules scenario's after its rules change included."""
    assert _profiles(increments["full_refresh"]) == _profiles(increments[3])
