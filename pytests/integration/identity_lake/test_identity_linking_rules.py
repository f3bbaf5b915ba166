"""Identity linking rules (SPEC.md section 5) on real dbt, Spark and Delta.

The rules scenario of the identity lake (conftest.py here says its runs): tenants of its own,
each with its own rules in the lake's identity_rules seed (rules_landings.py says the cases):
three collapses of 500 people through one test email (blocked, `email` limited to 1, no
rule), two CRM ids through one device (`crm` limited to 1), a generated graph under every
kind of rule checked against the pure rules (profile_lake.identity.linking), and shuffled
copies of the last two, their lines split over the lake's first two runs (order independence
on the same lake). The lake's run 4 changes the rules, its run 6 has a bad rules row, and the
lake ends with one whole build.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import pytest

from profile_lake.identity import resolve_renames
from profile_lake.identity.linking import Limits, Link, resolve_by_components
from pytests.integration.identity_lake.rules_landings import (
    PEOPLE,
    SHUFFLED,
    SHUFFLED_TENANTS,
    START,
    TEST_EMAIL,
    mixed_messages,
)

pytestmark = pytest.mark.integration

MIXED_LIMITS = Limits(6, {"crm": 1, "email": 2})


def live_links(messages: dict[str, list[dict]], tenant: str) -> tuple[list[str], list[Link]]:
    """Nodes and links (with recency) of a tenant's live records, canonicalized: SPEC §4 and §5
    in plain Python."""
    latest: dict[str, dict] = {}
    for message in sorted(
        (m for m in messages["records"] if m["tenant_id"] == tenant),
        key=lambda m: (m["event_ts"], m["seq"]),
    ):
        latest[message["record_id"]] = message
    live = [message for message in latest.values() if message["op"] == "upsert"]
    seen = {identity for m in live for identity in [m["primary_id"], *m["related_ids"]]}
    canonical = resolve_renames(
        [
            ((m["executed_ts"], m["seq"]), m["from_id"], m["to_id"])
            for m in messages["id_mutations"]
            if m["tenant_id"] == tenant
        ],
        seen,
    )
    newest: dict[tuple[str, str], Link] = {}
    nodes = []
    for message in live:
        event_ts = datetime.fromisoformat(message["event_ts"])
        primary = canonical[message["primary_id"]]
        nodes.append(primary)
        for related in message["related_ids"]:
            other = canonical[related]
            nodes.append(other)
            if other == primary:
                continue
            link = Link.of(primary, other, event_ts, message["record_id"])
            key = (link.smaller, link.larger)
            if key not in newest or (event_ts, link.record_id) > (
                newest[key].event_ts,
                newest[key].record_id,
            ):
                newest[key] = link
    return nodes, list(newest.values())


def like_blocked(identities: list[str], prefix: str) -> set[str]:
    return {identity for identity in identities if identity.startswith(prefix)}


def of_tenant(found: dict, tenant: str) -> dict:
    return {key[1:]: value for key, value in found.items() if key[0] == tenant}


@pytest.fixture(scope="module")
def linking(identity_lake) -> dict:
    """The rules scenario's observations: 1 and 2 (profiles and cut links after the lake's
    first two runs), "rules_changed", "bad_rules", "full_refresh", "whole_build"."""
    return identity_lake.rules


def test_a_blocked_test_email_leaves_one_profile_per_person(linking) -> None:
    profiles = of_tenant(linking[1]["profiles"], "collapse_blocked")
    assert len(set(profiles.values())) == PEOPLE + 1
    assert profiles[(TEST_EMAIL,)] == TEST_EMAIL
    for person in (0, 234, PEOPLE - 1):
        cookie = f"cookie:c{person:05d}"
        assert profiles[(f"email:p{person:05d}@x.test",)] == profiles[(cookie,)] == cookie
    exclusions = of_tenant(linking[1]["exclusions"], "collapse_blocked")
    assert len(exclusions) == PEOPLE
    assert {value[:2] for value in exclusions.values()} == {("blocked", None)}
    assert exclusions[("email:p00007@x.test", TEST_EMAIL)][3] == "r00007"


def test_an_email_limit_of_one_gives_the_same_profiles_by_the_ordering_rule(linking) -> None:
    """Worked by hand: links newest first. Person 499's record is the newest; its two links
    have the same recency, so the one with the smaller identity goes first:
    (cookie:c00499, email:p00499@x.test) joins the person's email and cookie (one email).
    Then (email:p00499@x.test, email:test@example.com) would put two emails in one profile:
    cut by namespace_limit email. Person 498 next, and so on down to person 0: every person
    keeps their cookie, every test-email link is cut, and the test email stays alone."""
    blocked = of_tenant(linking[1]["profiles"], "collapse_blocked")
    limited = of_tenant(linking[1]["profiles"], "collapse_limited")
    assert limited == blocked
    exclusions = of_tenant(linking[1]["exclusions"], "collapse_limited")
    assert len(exclusions) == PEOPLE
    assert {value[:2] for value in exclusions.values()} == {("namespace_limit", "email")}


def test_without_a_rule_the_collapse_is_one_profile(linking) -> None:
    plain = of_tenant(linking[1]["profiles"], "collapse_plain")
    assert len(plain) == 2 * PEOPLE + 1
    assert set(plain.values()) == {"cookie:c00000"}
    assert of_tenant(linking[1]["exclusions"], "collapse_plain") == {}


def test_a_crm_limit_splits_two_crm_ids_and_the_device_goes_with_the_newer(linking) -> None:
    profiles = of_tenant(linking[1]["profiles"], "crm_limited")
    assert profiles == {("crm:1",): "crm:1", ("crm:2",): "crm:2", ("device:d",): "crm:2"}
    exclusions = of_tenant(linking[1]["exclusions"], "crm_limited")
    assert exclusions == {
        ("crm:1", "device:d"): ("namespace_limit", "crm", START + timedelta(minutes=1), "older")
    }


def test_deleting_the_competitor_brings_the_cut_link_back_in_the_same_run(linking) -> None:
    assert of_tenant(linking[2]["profiles"], "crm_limited") == {
        ("crm:1",): "crm:1",
        ("device:d",): "crm:1",
    }
    assert of_tenant(linking[2]["exclusions"], "crm_limited") == {}


def test_a_newer_person_joining_the_collapse_is_resolved_incrementally(linking) -> None:
    newest = f"email:p{PEOPLE:05d}@x.test"
    limited = of_tenant(linking[2]["profiles"], "collapse_limited")
    assert limited[(newest,)] == f"cookie:c{PEOPLE:05d}"
    assert limited[(TEST_EMAIL,)] == TEST_EMAIL
    assert len(of_tenant(linking[2]["exclusions"], "collapse_limited")) == PEOPLE + 1
    plain = of_tenant(linking[2]["profiles"], "collapse_plain")
    assert set(plain.values()) == {"cookie:c00000"} and (newest,) in plain


def test_the_mixed_tenant_follows_the_rules_exactly(linking) -> None:
    nodes, links = live_links(mixed_messages(), "mixed")
    every = nodes + [end for link in links for end in (link.smaller, link.larger)]
    expected = resolve_by_components(nodes, links, like_blocked(every, "phone:+1555"), MIXED_LIMITS)
    assert of_tenant(linking[1]["profiles"], "mixed") == {
        (identity,): profile for identity, profile in expected.profiles.items()
    }
    assert of_tenant(linking[1]["exclusions"], "mixed") == {
        (cut.link.smaller, cut.link.larger): (
            cut.rule,
            cut.namespace,
            cut.link.event_ts,
            cut.link.record_id,
        )
        for cut in expected.cut
    }
    rules = {value[0] for value in of_tenant(linking[1]["exclusions"], "mixed").values()}
    assert rules == {"blocked", "max_identities", "namespace_limit"}


def test_a_rules_change_re_resolves_those_tenants_in_the_next_run(linking) -> None:
    changed = linking["rules_changed"]
    assert of_tenant(changed["profiles"], "collapse_plain") == of_tenant(
        linking[2]["profiles"], "collapse_limited"
    )
    assert {v[0] for v in of_tenant(changed["exclusions"], "collapse_plain").values()} == {
        "blocked"
    }
    assert of_tenant(changed["profiles"], "crm_limited") == {
        ("crm:1",): "crm:1",
        ("device:d",): "crm:1",
    }
    # tenants whose rules did not change kept their rows and stamps (mixed's new record
    # touched none of its stored components)
    for key, stamp in changed["resolved"].items():
        if key[0] in ("collapse_blocked", "collapse_limited", "mixed") and key[1] not in (
            "cookie:new1",
            "device:new1",
        ):
            assert stamp == changed["stamps_before"].get(key), key
    restamped = {key for key, stamp in changed["resolved"].items() if key[0] == "collapse_plain"}
    assert all(changed["resolved"][key] != changed["stamps_before"][key] for key in restamped)


def test_the_cut_links_kept_run_by_run_equal_a_full_refresh(linking) -> None:
    """Before and after a full refresh of the graph and its tables, every tenant's (after the
    rules change: collapse_plain's cut links came with its new rule, crm_limited's went)."""
    kept, refreshed = linking["full_refresh"]["kept"], linking["full_refresh"]["refreshed"]
    assert kept["exclusions"], "the scenario cuts links"
    assert kept["exclusions"] == refreshed["exclusions"]


def test_the_connections_kept_run_by_run_equal_a_full_refresh(linking) -> None:
    """Recounted per identity the graph restamped and the far ends of their cut links; every
    tenant's, so the other scenarios' renames, deletes and runs of some tenants too."""
    kept, refreshed = linking["full_refresh"]["kept"], linking["full_refresh"]["refreshed"]
    assert kept["connections"], "the scenario links identities"
    assert kept["connections"] == refreshed["connections"]


def test_a_bad_rules_row_fails_the_run_before_any_model_naming_the_row(linking) -> None:
    bad = linking["bad_rules"]
    # the header, the seven rules in force, then the bad row
    assert "identity_rules line 9 (crm_limited,namespace_limit,crm,0)" in bad["messages"]
    assert "positive integer" in bad["messages"]
    assert bad["statuses"] == {}
    assert bad["records_version_unchanged"]


def test_a_whole_build_with_rules_passes_every_model_and_data_test(linking) -> None:
    """The lake's last run, on every scenario's tables."""
    statuses = linking["whole_build"]["statuses"]
    assert statuses and set(statuses.values()) <= {"success", "pass", "warn"}, statuses


def test_a_profile_cut_from_every_record_is_well_formed(linking) -> None:
    """An identity a rule cut from every link, and no live record's primary identity, is a
    profile of its own (SPEC.md section 5) with no record: empty arrays and maps, zero counts.
    The blocked test email of collapse_blocked is one: it is only ever a related identity."""
    profiles = linking["whole_build"]["profiles"]
    recordless = {key: row for key, row in profiles.items() if not row["record_count"]}
    assert ("collapse_blocked", TEST_EMAIL) in recordless
    for row in recordless.values():
        assert row["live_records"] == [] and row["record_count_by_type"] == {}
        assert row["last_event_ts_by_type"] == {} and row["identity_count"] >= 1


# ---- order independence: the same lines shuffled and split over two runs ----------------------


def unprefixed(found: dict) -> dict:
    """The shuffled copies' rows, keyed by the tenant they copy."""
    return {
        (key[0].removeprefix(SHUFFLED), *key[1:]): value
        for key, value in found.items()
        if key[0].startswith(SHUFFLED)
    }


def scenario_rows(found: dict) -> dict:
    """The rows of the tenants the shuffled copies copy."""
    return {key: value for key, value in found.items() if key[0] in SHUFFLED_TENANTS}


def test_shuffled_runs_give_the_same_profiles_and_exclusions(linking) -> None:
    """The same lines, shuffled and split differently over the same two runs."""
    second = linking[2]
    assert unprefixed(second["profiles"]) == scenario_rows(second["profiles"])
    assert unprefixed(second["exclusions"]) == scenario_rows(second["exclusions"])
    assert unprefixed(second["exclusions"]), "the copies cut links"


def test_the_summary_prints_the_links_each_rule_cut_per_tenant(identity_lake, lake_home) -> None:
    from profile_lake.summary import summarize

    lines = summarize(lake_home, identity_lake.lake.schema)
    assert "  identity links cut by rules, per tenant:" in lines
    assert f"    collapse_limited: namespace_limit email {PEOPLE + 1}" in lines
    assert f"    collapse_blocked: blocked {PEOPLE}" in lines
    assert not any(line.startswith("    crm_limited:") for line in lines)


# ---- the two ruled paths of the Spark side against the pure rules ---------------------------


@pytest.mark.parametrize(
    "fast_path_max_links", [10_000, 0], ids=["one_call_per_tenant", "in_steps"]
)
def test_both_ruled_paths_follow_the_pure_rules(spark, tmp_path, fast_path_max_links) -> None:
    """A tenant that fits one worker is resolved in one pandas call, a bigger one in DataFrame
    steps (distributed components, pressure, ordered pass in buckets): both give the pure
    rules' profiles, plain components and cut links, on a random graph under every rule."""
    from profile_lake.identity.graph import components_union_find
    from profile_lake.identity.rules import TenantRules
    from profile_lake.spark.identity_linking import resolve_with_rules

    rng = random.Random(23)
    names = [f"{ns}:{index:03d}" for ns in ("crm", "email", "phone") for index in range(40)]
    names += ["phone:+15550001", "phone:+15550002"]
    rows = []
    for index in range(260):
        src, dst = rng.choice(names), rng.choice(names)
        rows.append(("mixed", src, dst, START + timedelta(seconds=rng.randrange(50)), f"r{index}"))
    rows.append(("mixed", "email:lone", "email:lone", START, "r-lone"))
    rows.append(("plain", "crm:001", "email:002", START, "r-plain"))
    links = spark.createDataFrame(
        rows, "tenant_id string, src string, dst string, event_ts timestamp, record_id string"
    )
    rules = {
        "mixed": TenantRules(
            blocked=("phone:+1555%",), namespace_limits={"crm": 1, "email": 2}, max_identities=6
        )
    }
    found = {
        (row["tenant_id"], row["identity_id"]): row
        for row in resolve_with_rules(
            links, rules, tmp_path / "checkpoints", fast_path_max_links
        ).collect()
    }

    mixed = [
        (src, dst, ts, record_id) for tenant, src, dst, ts, record_id in rows if tenant == "mixed"
    ]
    newest: dict[tuple[str, str], Link] = {}
    for src, dst, ts, record_id in mixed:
        if src != dst:
            link = Link.of(src, dst, ts, record_id)
            key = (link.smaller, link.larger)
            if key not in newest or (ts, record_id) > newest[key][2:]:
                newest[key] = link
    nodes = sorted({end for src, dst, _, _ in mixed for end in (src, dst)})
    blocked = like_blocked(nodes, "phone:+1555")
    expected = resolve_by_components(nodes, list(newest.values()), blocked, MIXED_LIMITS)
    open_links = [link for link in newest.values() if not {link.smaller, link.larger} & blocked]
    components = components_union_find([(link.smaller, link.larger) for link in open_links], nodes)
    assert {
        identity: row["profile_id"]
        for (tenant, identity), row in found.items()
        if tenant == "mixed"
    } == expected.profiles
    assert {
        identity: row["component_id"]
        for (tenant, identity), row in found.items()
        if tenant == "mixed"
    } == components
    cut = {
        (identity, link["other_id"], link["rule"], link["namespace"], link["record_id"])
        for (tenant, identity), row in found.items()
        if tenant == "mixed"
        for link in row["cut_links"]
    }
    home = {  # a blocked link's home is its end that is not blocked, if any
        id(cut): cut.link.larger
        if cut.rule == "blocked" and cut.link.smaller in blocked and cut.link.larger not in blocked
        else cut.link.smaller
        for cut in expected.cut
    }
    assert cut == {
        (
            home[id(item)],
            item.link.smaller if home[id(item)] == item.link.larger else item.link.larger,
            item.rule,
            item.namespace,
            item.link.record_id,
        )
        for item in expected.cut
    }
    assert {"blocked", "max_identities", "namespace_limit"} <= {rule for _, _, rule, _, _ in cut}
    assert found[("plain", "email:002")]["profile_id"] == "crm:001"
    assert found[("mixed", "email:lone")]["profile_id"] == "email:lone"


def test_a_pressured_component_too_large_for_one_worker_fails_clearly(spark, tmp_path) -> None:
    """Past the fast path, a pressured component is ordered in one Python worker: one with more
    links than it takes stops the run with the tenant, the component and what to do."""
    from profile_lake.identity.rules import TenantRules
    from profile_lake.spark.identity_linking import PressuredComponentTooLarge, resolve_with_rules

    rows = [("kiosk", f"crm:{index}", "device:kiosk", START, f"r{index}") for index in range(6)]
    rows.append(("kiosk", "crm:9", "email:9", START, "r9"))  # a component within the limit
    links = spark.createDataFrame(
        rows, "tenant_id string, src string, dst string, event_ts timestamp, record_id string"
    )
    rules = {"kiosk": TenantRules(namespace_limits={"crm": 1})}
    with pytest.raises(PressuredComponentTooLarge) as raised:
        resolve_with_rules(
            links, rules, tmp_path / "checkpoints", fast_path_max_links=0, pressured_max_links=5
        ).collect()
    message = str(raised.value)
    assert "tenant kiosk" in message and "crm:0" in message and "6 links" in message
    assert "PROFILE_LAKE_PRESSURED_MAX_LINKS" in message and "blocked" in message
    # within the limit, the same tenant resolves: the kiosk keeps its newest crm link only
    found = resolve_with_rules(
        links, rules, tmp_path / "again", fast_path_max_links=0, pressured_max_links=6
    ).collect()
    cut = sum(len(row["cut_links"]) for row in found if row["tenant_id"] == "kiosk")
    assert cut == 5
