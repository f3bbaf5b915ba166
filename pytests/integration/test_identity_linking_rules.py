"""Identity linking rules (SPEC.md section 5) on real dbt, Spark and Delta.

The rules live in a seed, so each lake here is built from a copy of the project whose seeds
folder is the test's own (tenants and identity_rules); models, macros and the package are the
repository's. One scenario per tenant:

* collapse_blocked, collapse_limited, collapse_plain: 500 people, each one record linking
  their own email to their own cookie and to `email:test@example.com`; the test email blocked,
  `email` limited to 1, and no rule;
* crm_limited: two CRM ids linked through one device, `crm` limited to 1;
* mixed: a generated graph under every kind of rule, with updates, deletes and renames,
  checked against the pure rules (profile_lake.identity.linking);
* shuffled_crm_limited, shuffled_mixed: those two again under the same rules, from the same
  lines shuffled and split over the lake's first two runs (order independence on the same
  lake; the collapses' 1,500 records are left out, the mixed graph has every rule).
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from profile_lake.identity import resolve_renames
from profile_lake.identity.linking import Limits, Link, resolve_by_components
from pytests.support.dbt_runner import DbtRun, run_dbt
from pytests.support.project_copy import project_copy

pytestmark = pytest.mark.integration

START = datetime(2026, 1, 1, tzinfo=UTC)
PEOPLE = 500
TEST_EMAIL = "email:test@example.com"
TENANTS = ["collapse_blocked", "collapse_limited", "collapse_plain", "crm_limited", "mixed"]
RULES = [
    ("collapse_blocked", "blocked", "", TEST_EMAIL),
    ("collapse_limited", "namespace_limit", "email", "1"),
    ("crm_limited", "namespace_limit", "crm", "1"),
    ("mixed", "blocked", "", "phone:+1555%"),
    ("mixed", "namespace_limit", "email", "2"),
    ("mixed", "namespace_limit", "crm", "1"),
    ("mixed", "max_identities", "", "6"),
]
MIXED_LIMITS = Limits(6, {"crm": 1, "email": 2})
SHUFFLED = "shuffled_"  # the order-independence copies' tenants: the same ids, prefixed
SHUFFLED_TENANTS = ("crm_limited", "mixed")
# written after the scenario's own rules, so a row's line number does not depend on them
SHUFFLED_RULES = [
    (SHUFFLED + tenant, *rest) for tenant, *rest in RULES if tenant in SHUFFLED_TENANTS
]
# cautious: a test of the tenants seed that also reads an unselected model is left out
GRAPH_SELECTION = [
    "--select",
    "+identity_link_exclusions",
    "+profile_identities",
    "+int_identity_connections",
    "--indirect-selection",
    "cautious",
]
GRAPH_ONLY = [*GRAPH_SELECTION, "--exclude", "resource_type:test"]


def at(minutes: float) -> str:
    return (START + timedelta(minutes=minutes)).isoformat()


def record(tenant, record_id, primary, related=(), minute=0.0, op="upsert", seq=0) -> dict:
    message = {
        "tenant_id": tenant,
        "record_id": record_id,
        "op": op,
        "event_ts": at(minute),
        "seq": seq,
        "record_type": "profile",
        "primary_id": primary,
        "related_ids": list(related),
    }
    if op == "upsert":
        message["payload"] = {"id": record_id}
    return message


def rename(tenant, from_id, to_id, minute) -> dict:
    return {
        "tenant_id": tenant,
        "from_id": from_id,
        "to_id": to_id,
        "executed_ts": at(minute),
        "seq": 0,
    }


def collapse_records(tenant: str, people: range) -> list[dict]:
    return [
        record(
            tenant,
            f"r{person:05d}",
            f"email:p{person:05d}@x.test",
            [f"cookie:c{person:05d}", TEST_EMAIL],
            minute=person,
        )
        for person in people
    ]


def mixed_messages() -> dict[str, list[dict]]:
    """About 300 records over 60 identities of five namespaces (crm ids and emails that the
    limits bind, phones a pattern blocks), then updates, deletes and three renames."""
    rng = random.Random(41)
    pool = (
        [f"email:m{i}@x.test" for i in range(15)]
        + [f"crm:{i}" for i in range(12)]
        + [f"cookie:k{i}" for i in range(15)]
        + [f"device:d{i}" for i in range(10)]
        + ["phone:+15550001", "phone:+15550002", "phone:+4930111", "phone:+4930222"]
    )
    records = []
    for number in range(240):
        related = rng.sample(pool, rng.randint(0, 3))
        records.append(
            record("mixed", f"m{number:03d}", rng.choice(pool), related, minute=rng.randint(0, 90))
        )
    for number in rng.sample(range(240), 40):  # later versions: new links, or deleted
        if number % 3:
            related = rng.sample(pool, rng.randint(0, 3))
            records.append(
                record("mixed", f"m{number:03d}", rng.choice(pool), related, minute=100 + number)
            )
        else:
            records.append(
                record("mixed", f"m{number:03d}", "crm:0", op="delete", minute=100 + number)
            )
    renames = [
        rename("mixed", "email:m1@x.test", "email:m2@x.test", 5),
        rename("mixed", "crm:3", "crm:4", 6),
        rename("mixed", "cookie:k1", "phone:+15550001", 7),  # renamed into a blocked identity
    ]
    return {"records": records, "id_mutations": renames, "entity_names": []}


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


def rules_project(root: Path, rules: list[tuple[str, str, str, str]]) -> Path:
    """The project's dbt files, with the test's own tenants and identity rules."""
    tenants = (
        "tenant_id,record_types,max_payload_bytes,max_lag_minutes,max_profile_identities\n"
        + "".join(
            f"{tenant},profile|event,1048576,1440,100000\n"
            for tenant in [*TENANTS, *(SHUFFLED + tenant for tenant in SHUFFLED_TENANTS)]
        )
    )
    copy = project_copy(root, {"tenants.csv": tenants})
    write_rules(copy, rules)
    return copy


def write_rules(project: Path, rules: list[tuple[str, str, str, str]]) -> None:
    """The scenario's rules, then the shuffled copies' (which never change)."""
    (project / "seeds" / "identity_rules.csv").write_text(
        "tenant_id,rule,namespace,value\n"
        + "".join(",".join(row) + "\n" for row in [*rules, *SHUFFLED_RULES])
    )


def write_landing(landing: Path, messages: dict[str, list[dict]], part: str) -> None:
    for stream, lines in messages.items():
        folder = landing / stream
        folder.mkdir(parents=True, exist_ok=True)
        if lines:
            (folder / f"{part}.jsonl").write_text("".join(json.dumps(m) + "\n" for m in lines))


class RulesLake:
    def __init__(self, spark, lake_home: Path, root: Path, schema: str) -> None:
        self.spark, self.schema = spark, schema
        self.project = rules_project(root, RULES)
        self.landing = root / "landing"
        self.target = lake_home / "target" / schema

    def dbt(self, args: list[str], expect_pass: bool = True) -> DbtRun:
        return run_dbt(
            args,
            expect_pass=expect_pass,
            env={"PROFILE_LAKE_SCHEMA": self.schema, "PROFILE_LAKE_LANDING": str(self.landing)},
            target_path=self.target,
            project_dir=self.project,
        )

    def profiles(self) -> dict[tuple[str, str], str]:
        return {
            (row["tenant_id"], row["identity_id"]): row["profile_id"]
            for row in self.spark.table(f"{self.schema}.profile_identities").collect()
        }

    def exclusions(self) -> dict[tuple[str, str, str], tuple]:
        return {
            (row["tenant_id"], row["smaller_identity_id"], row["larger_identity_id"]): (
                row["rule"],
                row["namespace"],
                row["event_ts"].replace(tzinfo=UTC),
                row["record_id"],
            )
            for row in self.spark.table(f"{self.schema}.identity_link_exclusions").collect()
        }

    def connections(self) -> dict[tuple[str, str], tuple[int, int]]:
        table = f"{self.schema}_intermediate.int_identity_connections"
        return {
            (row["tenant_id"], row["identity_id"]): (row["linked_identities"], row["record_count"])
            for row in self.spark.table(table).collect()
        }

    def profile_rows(self) -> dict[tuple[str, str], dict]:
        return {
            (row["tenant_id"], row["profile_id"]): row.asDict()
            for row in self.spark.table(f"{self.schema}.profiles").collect()
        }

    def version(self, table: str) -> int:
        return self.spark.sql(f"describe history {self.schema}.{table} limit 1").first()["version"]


def of_tenant(found: dict, tenant: str) -> dict:
    return {key[1:]: value for key, value in found.items() if key[0] == tenant}


RUN_1 = {
    "records": [
        *collapse_records("collapse_blocked", range(PEOPLE)),
        *collapse_records("collapse_limited", range(PEOPLE)),
        *collapse_records("collapse_plain", range(PEOPLE)),
        record("crm_limited", "older", "crm:1", ["device:d"], minute=1),
        record("crm_limited", "newer", "crm:2", ["device:d"], minute=2),
    ],
    "id_mutations": [],
    "entity_names": [],
}
RUN_2 = {
    "records": [
        # a newer person joins each collapse; the newer CRM link's record is deleted
        *collapse_records("collapse_limited", range(PEOPLE, PEOPLE + 1)),
        *collapse_records("collapse_plain", range(PEOPLE, PEOPLE + 1)),
        record("crm_limited", "newer", "crm:2", op="delete", minute=3),
    ],
    "id_mutations": [],
    "entity_names": [],
}


@pytest.fixture(scope="module")
def rules_lake(spark, lake_home: Path, tmp_path_factory) -> dict:
    """Run 1 (with the mixed tenant), run 2, a run after a rules change, a run on bad rules."""
    lake = RulesLake(spark, lake_home, tmp_path_factory.mktemp("rules-lake"), "linking_rules")
    mixed = mixed_messages()
    shuffled = shuffled_parts({k: RUN_1[k] + RUN_2[k] + mixed[k] for k in RUN_1}, parts=2)
    write_landing(lake.landing, {k: RUN_1[k] + mixed[k] for k in RUN_1}, "part-00001")
    write_landing(lake.landing, shuffled[0], "shuffled-00001")
    # no data tests until the whole build that ends the scenario, which runs them on every row
    lake.dbt(["build", *GRAPH_ONLY])
    states = {1: {"profiles": lake.profiles(), "exclusions": lake.exclusions()}}
    write_landing(lake.landing, RUN_2, "part-00002")
    write_landing(lake.landing, shuffled[1], "shuffled-00002")
    lake.dbt(["build", *GRAPH_ONLY])
    states[2] = {"profiles": lake.profiles(), "exclusions": lake.exclusions()}
    # collapse_plain gets the test email blocked; crm_limited loses its rule
    write_rules(
        lake.project,
        [row for row in RULES if row[0] != "crm_limited"]
        + [("collapse_plain", "blocked", "", TEST_EMAIL)],
    )
    resolved = "linking_rules_intermediate.int_profile_identities_resolved"
    before = {
        (row["tenant_id"], row["identity_id"]): row["records_version"]
        for row in spark.table(resolved).collect()
    }
    # and a new record of mixed, so that the run has a new version of records to stamp
    write_landing(
        lake.landing,
        {"records": [record("mixed", "extra", "cookie:new1", ["device:new1"], minute=500)]},
        "part-00003",
    )
    lake.dbt(["build", *GRAPH_ONLY])
    states["rules_changed"] = {
        "profiles": lake.profiles(),
        "exclusions": lake.exclusions(),
        "stamps_before": before,
        "resolved": {
            (row["tenant_id"], row["identity_id"]): row["records_version"]
            for row in spark.table(resolved).collect()
        },
    }
    # the cut links and the connections kept run by run equal a full evaluation of the graph
    states["rules_changed"]["connections"] = lake.connections()
    lake.dbt(
        [
            "run",
            "--full-refresh",
            "--select",
            "identity_link_exclusions",
            "int_identity_connections",
        ]
    )
    states["rules_changed"]["exclusions_full_refresh"] = lake.exclusions()
    states["rules_changed"]["connections_full_refresh"] = lake.connections()
    write_rules(lake.project, [*RULES, ("crm_limited", "namespace_limit", "crm", "0")])
    records_version = lake.version("records")
    failed = lake.dbt(["build", *GRAPH_ONLY], expect_pass=False)
    states["bad_rules"] = {
        "messages": failed.messages(),
        "statuses": failed.statuses(),
        "records_version_unchanged": lake.version("records") == records_version,
    }
    write_rules(lake.project, RULES)
    # the scenario ends as a user's lake does: one whole build, every model and data test, on
    # every row (profiles cut from every record included)
    whole = lake.dbt(["build", "--vars", "{full_checks: true}"])
    states["whole_build"] = {"statuses": whole.statuses(), "profiles": lake.profile_rows()}
    return {"lake": lake, "mixed": mixed, **states}


def test_a_blocked_test_email_leaves_one_profile_per_person(rules_lake) -> None:
    profiles = of_tenant(rules_lake[1]["profiles"], "collapse_blocked")
    assert len(set(profiles.values())) == PEOPLE + 1
    assert profiles[(TEST_EMAIL,)] == TEST_EMAIL
    for person in (0, 234, PEOPLE - 1):
        cookie = f"cookie:c{person:05d}"
        assert profiles[(f"email:p{person:05d}@x.test",)] == profiles[(cookie,)] == cookie
    exclusions = of_tenant(rules_lake[1]["exclusions"], "collapse_blocked")
    assert len(exclusions) == PEOPLE
    assert {value[:2] for value in exclusions.values()} == {("blocked", None)}
    assert exclusions[("email:p00007@x.test", TEST_EMAIL)][3] == "r00007"


def test_an_email_limit_of_one_gives_the_same_profiles_by_the_ordering_rule(rules_lake) -> None:
    """Worked by hand: links newest first. Person 499's record is the newest; its two links
    have the same recency, so the one with the smaller identity goes first:
    (cookie:c00499, email:p00499@x.test) joins the person's email and cookie (one email).
    Then (email:p00499@x.test, email:test@example.com) would put two emails in one profile:
    cut by namespace_limit email. Person 498 next, and so on down to person 0: every person
    keeps their cookie, every test-email link is cut, and the test email stays alone."""
    blocked = of_tenant(rules_lake[1]["profiles"], "collapse_blocked")
    limited = of_tenant(rules_lake[1]["profiles"], "collapse_limited")
    assert limited == blocked
    exclusions = of_tenant(rules_lake[1]["exclusions"], "collapse_limited")
    assert len(exclusions) == PEOPLE
    assert {value[:2] for value in exclusions.values()} == {("namespace_limit", "email")}


def test_without_a_rule_the_collapse_is_one_profile(rules_lake) -> None:
    plain = of_tenant(rules_lake[1]["profiles"], "collapse_plain")
    assert len(plain) == 2 * PEOPLE + 1
    assert set(plain.values()) == {"cookie:c00000"}
    assert of_tenant(rules_lake[1]["exclusions"], "collapse_plain") == {}


def test_a_crm_limit_splits_two_crm_ids_and_the_device_goes_with_the_newer(rules_lake) -> None:
    profiles = of_tenant(rules_lake[1]["profiles"], "crm_limited")
    assert profiles == {("crm:1",): "crm:1", ("crm:2",): "crm:2", ("device:d",): "crm:2"}
    exclusions = of_tenant(rules_lake[1]["exclusions"], "crm_limited")
    assert exclusions == {
        ("crm:1", "device:d"): ("namespace_limit", "crm", START + timedelta(minutes=1), "older")
    }


def test_deleting_the_competitor_brings_the_cut_link_back_in_the_same_run(rules_lake) -> None:
    assert of_tenant(rules_lake[2]["profiles"], "crm_limited") == {
        ("crm:1",): "crm:1",
        ("device:d",): "crm:1",
    }
    assert of_tenant(rules_lake[2]["exclusions"], "crm_limited") == {}


def test_a_newer_person_joining_the_collapse_is_resolved_incrementally(rules_lake) -> None:
    newest = f"email:p{PEOPLE:05d}@x.test"
    limited = of_tenant(rules_lake[2]["profiles"], "collapse_limited")
    assert limited[(newest,)] == f"cookie:c{PEOPLE:05d}"
    assert limited[(TEST_EMAIL,)] == TEST_EMAIL
    assert len(of_tenant(rules_lake[2]["exclusions"], "collapse_limited")) == PEOPLE + 1
    plain = of_tenant(rules_lake[2]["profiles"], "collapse_plain")
    assert set(plain.values()) == {"cookie:c00000"} and (newest,) in plain


def test_the_mixed_tenant_follows_the_rules_exactly(rules_lake) -> None:
    nodes, links = live_links(rules_lake["mixed"], "mixed")
    every = nodes + [end for link in links for end in (link.smaller, link.larger)]
    expected = resolve_by_components(nodes, links, like_blocked(every, "phone:+1555"), MIXED_LIMITS)
    assert of_tenant(rules_lake[1]["profiles"], "mixed") == {
        (identity,): profile for identity, profile in expected.profiles.items()
    }
    assert of_tenant(rules_lake[1]["exclusions"], "mixed") == {
        (cut.link.smaller, cut.link.larger): (
            cut.rule,
            cut.namespace,
            cut.link.event_ts,
            cut.link.record_id,
        )
        for cut in expected.cut
    }
    rules = {value[0] for value in of_tenant(rules_lake[1]["exclusions"], "mixed").values()}
    assert rules == {"blocked", "max_identities", "namespace_limit"}


def test_a_rules_change_re_resolves_those_tenants_in_the_next_run(rules_lake) -> None:
    changed = rules_lake["rules_changed"]
    assert of_tenant(changed["profiles"], "collapse_plain") == of_tenant(
        rules_lake[2]["profiles"], "collapse_limited"
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


def test_the_cut_links_kept_run_by_run_equal_a_full_refresh(rules_lake) -> None:
    changed = rules_lake["rules_changed"]
    assert changed["exclusions"], "the scenario cuts links"
    assert changed["exclusions"] == changed["exclusions_full_refresh"]


def test_the_connections_kept_run_by_run_equal_a_full_refresh(rules_lake) -> None:
    """Recounted per identity the graph restamped and the far ends of their cut links."""
    changed = rules_lake["rules_changed"]
    assert changed["connections"], "the scenario links identities"
    assert changed["connections"] == changed["connections_full_refresh"]


def test_a_bad_rules_row_fails_the_run_before_any_model_naming_the_row(rules_lake) -> None:
    bad = rules_lake["bad_rules"]
    assert "identity_rules line 9 (crm_limited,namespace_limit,crm,0)" in bad["messages"]
    assert "positive integer" in bad["messages"]
    assert bad["statuses"] == {}
    assert bad["records_version_unchanged"]


def test_a_whole_build_with_rules_passes_every_model_and_data_test(rules_lake) -> None:
    statuses = rules_lake["whole_build"]["statuses"]
    assert statuses and set(statuses.values()) <= {"success", "pass", "warn"}, statuses


def test_a_profile_cut_from_every_record_is_well_formed(rules_lake) -> None:
    """An identity a rule cut from every link, and no live record's primary identity, is a
    profile of its own (SPEC.md section 5) with no record: empty arrays and maps, zero counts.
    The blocked test email of collapse_blocked is one: it is only ever a related identity."""
    profiles = rules_lake["whole_build"]["profiles"]
    recordless = {key: row for key, row in profiles.items() if not row["record_count"]}
    assert ("collapse_blocked", TEST_EMAIL) in recordless
    for row in recordless.values():
        assert row["live_records"] == [] and row["record_count_by_type"] == {}
        assert row["last_event_ts_by_type"] == {} and row["identity_count"] >= 1


# ---- order independence: the same lines shuffled and split over two runs ----------------------


def shuffled_parts(every: dict[str, list[dict]], parts: int) -> list[dict[str, list[dict]]]:
    """The lines of `every` of SHUFFLED_TENANTS, their tenant prefixed with SHUFFLED, shuffled
    and split at random over `parts` runs (the first line of each stream in the first)."""
    rng = random.Random(4141)
    split: list[dict[str, list[dict]]] = [{k: [] for k in every} for _ in range(parts)]
    for stream, lines in every.items():
        lines = [
            {**line, "tenant_id": SHUFFLED + line["tenant_id"]}
            for line in lines
            if line["tenant_id"] in SHUFFLED_TENANTS
        ]
        rng.shuffle(lines)
        for index, line in enumerate(lines):
            split[rng.randrange(parts) if index else 0][stream].append(line)
    return split


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


def test_shuffled_runs_give_the_same_profiles_and_exclusions(rules_lake) -> None:
    """The same lines, shuffled and split differently over the same two runs."""
    second = rules_lake[2]
    assert unprefixed(second["profiles"]) == scenario_rows(second["profiles"])
    assert unprefixed(second["exclusions"]) == scenario_rows(second["exclusions"])
    assert unprefixed(second["exclusions"]), "the copies cut links"


def test_the_summary_prints_the_links_each_rule_cut_per_tenant(rules_lake, lake_home) -> None:
    from profile_lake.summary import summarize

    lines = summarize(lake_home, rules_lake["lake"].schema)
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
