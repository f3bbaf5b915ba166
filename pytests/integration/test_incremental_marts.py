"""Incremental marts equal a full rebuild (issue 38).

A seeded random landing: a base part, then two parts of changes aimed with a plain Python
fold of the landing (new records, updates, deletes, a revived record, renames, name changes
and removals, a record joining two current profiles, a deleted record splitting one). Lake A
builds the base, then runs once per new part, each mart's technique (profile_lake.techniques)
forced to `keys` in the first run and to `whole` in the second (the cost model's choice, which
every other lake runs, is unit-tested in pytests/unit/test_techniques.py). With `keys`,
profile_identities, profiles, profile_segments and identity_index MERGE only the keys each
run's changes reach, identity_graph_health and identity_graph_top_identities only the tenants
they reach (health from the counts kept up from the feeds, the ranking from
int_identity_connections, recounted per identity), tenant_lag from its batch rows. Lake B
builds the same landing in one full refresh. Every row of the marts (and of records,
identity_map, entity_names and int_identity_connections, and of int_tenant_batches summed per
tenant) is the same in both; the segments read the clock at the same var
segment_evaluation_ts. The `keys` run compiles its plans, as production does on a large lake,
and the driver logs no error in it. (This scenario cuts no link: identity_link_exclusions is
compared in test_identity_linking_rules.)
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from profile_lake.change_feed import Commit
from profile_lake.identity import components_union_find, resolve_renames
from profile_lake.mart_feeds import rewrites_table
from pytests.support.dbt_runner import DbtRun, run_dbt
from pytests.support.driver_log import driver_log
from pytests.support.landing import write_landing

pytestmark = pytest.mark.integration

SEED = 38
EVALUATION_TS = datetime(2025, 12, 1, tzinfo=UTC)
# JSON is YAML too, and keeps the timestamp a string (bare, YAML would read a datetime)
SEGMENT_VARS = json.dumps({"segment_evaluation_ts": "2025-12-01T00:00:00Z"})
# eight days on, with nothing new: clock segments change for some profiles, not for all; the
# changed keys forced, to show the profiles due are re-evaluated, not every profile
LATER_VARS = json.dumps({"segment_evaluation_ts": "2025-12-09T00:00:00Z", "mart_technique": "keys"})
# The technique of each run after the base (profile_lake.techniques): each forced once. The
# `tenants` run's part holds changes of one tenant, TENANTS_RUN_TENANT, alone.
RUN_TECHNIQUES = ("keys", "whole", "tenants")
TENANTS_RUN_TENANT = "globex"
# the tests' sessions interpret plans (pytests/conftest.py); production compiles on big lakes
CODE_GENERATION_ON = {"PROFILE_LAKE_CODEGEN": "true"}
# the marts and every node upstream of them (`dbt run` leaves the seeds, built once, out)
SELECTION = [
    "--select",
    "+profile_segments",
    "+identity_index",
    "+identity_graph_health",
    "+identity_graph_top_identities",
    "+identity_link_exclusions",
    "+tenant_lag",
]
MODELS_ONLY = ["--exclude", "resource_type:test"]
RENAMES_FROM = datetime(2025, 6, 1, tzinfo=UTC)
NAMES_FROM = datetime(2025, 6, 1, tzinfo=UTC)
TENANT_RECORD_TYPES = {
    "acme": ("profile", "event"),
    "globex": ("profile", "event"),
    "initech": ("profile", "event", "order"),
}
RECORDS_PER_TENANT = 12
RUNS = len(RUN_TECHNIQUES)
MARTS = (
    "profile_identities",
    "profiles",
    "profile_segments",
    "identity_index",
    "identity_graph_health",
    "identity_graph_top_identities",
    "tenant_lag",
)
# table -> its key and the columns left out (the two lakes number their ingest batches apart)
COMPARED = {
    "records": (("tenant_id", "record_id"), ("ingest_batch_id",)),
    "identity_map": (("tenant_id", "identity_id"), ("ingest_batch_id",)),
    "entity_names": (("tenant_id", "id"), ("ingest_batch_id",)),
    "profile_identities": (("tenant_id", "identity_id"), ()),
    "profiles": (("tenant_id", "profile_id"), ()),
    "profile_segments": (("tenant_id", "profile_id"), ()),
    "identity_index": (("tenant_id", "identity_id"), ()),
    # measured_at: when each lake measured the tenant
    "identity_graph_health": (("tenant_id",), ("measured_at",)),
    "identity_graph_top_identities": (("tenant_id", "identity_id"), ()),
    "tenant_lag": (("tenant_id",), ("measured_at", "applied_batch_id")),
    "int_identity_connections": (("tenant_id", "identity_id"), ()),
    # per tenant (the lakes number their batches apart): SUMMED_BATCHES
    "int_tenant_batches": (("tenant_id",), ()),
}
# int_tenant_batches summed per tenant: the same whichever batches the lines came in
SUMMED_BATCHES = """
    select
        tenant_id,
        sum(landed_lines) as landed_lines,
        sum(staged_lines) as staged_lines,
        sum(accepted_lines) as accepted_lines,
        max(newest_accepted_event_ts) as newest_accepted_event_ts
    from {schema}_intermediate.int_tenant_batches
    group by tenant_id
"""
KINDS = (
    "new record",
    "update",
    "late update",
    "delete",
    "revival",
    "rename",
    "name change",
    "name removal",
    "merge",
    "split",
)
NAMES = ("Ann", "Bob", "Cleo", "Dev", "Eve", "Fay", "Gus", "Hal")


def ts(moment: datetime) -> str:
    return moment.isoformat()


def at(message: dict) -> tuple[datetime, int]:
    return datetime.fromisoformat(message["event_ts"]), message["seq"]


class Scenario:
    """The landing parts of a random sequence of changes, with the state they lead to (a plain
    Python fold, the rules of SPEC.md section 4), so that changes can be aimed: a merge links
    two current profiles, a split deletes the only link between two parts of one."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seq = itertools.count()
        self.fresh = itertools.count(1)
        self.events: dict[tuple[str, str], list[dict]] = {}
        self.renames: list[dict] = []
        self.names: dict[tuple[str, str], list[dict]] = {}
        self.rename_minutes = itertools.count(10, 10)
        self.name_minutes = itertools.count(10, 10)
        self.parts: list[dict[str, list[dict]]] = []
        self.kinds: Counter[str] = Counter()
        self.part: dict[str, list[dict]] = {}
        self.touched: set[tuple[str, str]] = set()

    # ---------- the state the landing so far leads to

    def live(self, tenant: str) -> dict[str, dict]:
        """record_id -> its last event, for the records of `tenant` whose last event is an
        upsert."""
        found = {}
        for (record_tenant, record_id), messages in self.events.items():
            last = max(messages, key=at)
            if record_tenant == tenant and last["op"] == "upsert":
                found[record_id] = last
        return found

    def deleted(self, tenant: str) -> list[str]:
        return sorted(
            record_id
            for (record_tenant, record_id), messages in self.events.items()
            if record_tenant == tenant and max(messages, key=at)["op"] == "delete"
        )

    def canonical(self, tenant: str) -> dict[str, str]:
        renames = [
            ((micros(message["executed_ts"]), message["seq"]), message["from_id"], message["to_id"])
            for message in self.renames
            if message["tenant_id"] == tenant
        ]
        seen = {
            identity
            for (record_tenant, _), messages in self.events.items()
            if record_tenant == tenant
            for message in messages
            for identity in (message["primary_id"], *message["related_ids"])
        }
        return resolve_renames(renames, seen)

    def profiles(self, tenant: str, without: str | None = None) -> dict[str, str]:
        """canonical identity -> profile_id over the live records (but `without`)."""
        mapping = self.canonical(tenant)
        links, nodes = [], []
        for record_id, message in self.live(tenant).items():
            if record_id == without:
                continue
            primary = mapping[message["primary_id"]]
            nodes.append(primary)
            links += [(primary, mapping[related]) for related in message["related_ids"]]
        return components_union_find(links, nodes)

    def identities(self, tenant: str) -> list[str]:
        """The identities the live records of `tenant` carry."""
        return sorted(
            {
                identity
                for message in self.live(tenant).values()
                for identity in (message["primary_id"], *message["related_ids"])
            }
        )

    def current_names(self, tenant: str) -> dict[str, str | None]:
        return {
            identity: max(messages, key=lambda m: (m["updated_ts"], m["seq"]))["name"]
            for (name_tenant, identity), messages in self.names.items()
            if name_tenant == tenant
        }

    # ---------- moments

    def recent(self) -> datetime:
        """Within the 7 days before the evaluation time."""
        return EVALUATION_TS - timedelta(minutes=self.rng.randint(10, 6 * 24 * 60))

    def old(self) -> datetime:
        return EVALUATION_TS - timedelta(minutes=self.rng.randint(9 * 24 * 60, 60 * 24 * 60))

    def later_than(self, moment: datetime) -> datetime:
        """A moment after `moment`: recent or old, at random when both are possible."""
        week_ago = EVALUATION_TS - timedelta(days=8)
        if moment < week_ago and self.rng.random() < 0.5:
            return moment + (week_ago - moment) * self.rng.random() + timedelta(minutes=1)
        start = max(moment, EVALUATION_TS - timedelta(days=6))
        return start + (EVALUATION_TS - timedelta(minutes=5) - start) * self.rng.random()

    # ---------- messages

    def fresh_identity(self, tenant: str) -> str:
        number = next(self.fresh)
        namespace = self.rng.choice(("email", "email", "phone", "cookie", "crm", "loyalty"))
        if namespace == "email":
            return f"email:u{number}@{tenant}.test"
        if namespace == "phone":
            return f"phone:+1555{number:04d}"
        return f"{namespace}:{tenant}-{number}"

    def some_identity(self, tenant: str, fresh_share: float = 0.4) -> str:
        known = self.identities(tenant)
        if not known or self.rng.random() < fresh_share:
            return self.fresh_identity(tenant)
        return self.rng.choice(known)

    def record(
        self,
        tenant: str,
        record_id: str,
        moment: datetime,
        *,
        primary: str,
        related: list[str],
        kind: str,
        op: str = "upsert",
    ) -> dict:
        message = {
            "tenant_id": tenant,
            "record_id": record_id,
            "op": op,
            "event_ts": ts(moment),
            "seq": next(self.seq),
            "record_type": kind,
            "primary_id": primary,
            "related_ids": related,
        }
        if op == "upsert":
            tag = f"t{self.rng.randint(1, 4)}"
            message["payload"] = {
                "id": record_id,
                "n": self.rng.randint(0, 99),
                "tags": {tag: self.rng.choice([True, None, "x"])},
            }
        self.events.setdefault((tenant, record_id), []).append(message)
        self.part["records"].append(message)
        self.touched.add((tenant, record_id))
        return message

    def untouched_live(self, tenant: str) -> list[str]:
        """Live records of `tenant` the part being written has not changed yet."""
        return sorted(set(self.live(tenant)) - {r for t, r in self.touched if t == tenant})

    # ---------- the kinds of change

    def new_record(self, tenant: str, moment: datetime | None = None) -> None:
        related = [
            self.some_identity(tenant, fresh_share=0.7)
            for _ in range(self.rng.choice((0, 1, 1, 2)))
        ]
        self.record(
            tenant,
            f"r{next(self.fresh)}",
            moment or (self.recent() if self.rng.random() < 0.3 else self.old()),
            primary=self.some_identity(tenant, fresh_share=0.6),
            related=sorted(set(related)),
            kind=self.rng.choice(TENANT_RECORD_TYPES[tenant]),
        )
        self.kinds["new record"] += 1

    def update(self, tenant: str, late: bool = False) -> bool:
        """A new event of a live record changing its type, related ids, event time and maybe
        its primary id; `late`: older than the record's last event (so it changes the payload
        only)."""
        candidates = self.untouched_live(tenant)
        if not candidates:
            return False
        record_id = self.rng.choice(candidates)
        last = self.live(tenant)[record_id]
        last_at = datetime.fromisoformat(last["event_ts"])
        moment = last_at - timedelta(hours=self.rng.randint(1, 48)) if late else None
        related = [
            self.some_identity(tenant, fresh_share=0.7) for _ in range(self.rng.choice((0, 1, 2)))
        ]
        self.record(
            tenant,
            record_id,
            moment or self.later_than(last_at),
            primary=(
                self.some_identity(tenant) if self.rng.random() < 0.25 else last["primary_id"]
            ),
            related=sorted(set(related)),
            kind=self.rng.choice(TENANT_RECORD_TYPES[tenant]),
        )
        self.kinds["late update" if late else "update"] += 1
        return True

    def delete(self, tenant: str) -> bool:
        candidates = self.untouched_live(tenant)
        if not candidates:
            return False
        self.delete_record(tenant, self.rng.choice(candidates))
        self.kinds["delete"] += 1
        return True

    def delete_record(self, tenant: str, record_id: str) -> None:
        last = self.live(tenant)[record_id]
        self.record(
            tenant,
            record_id,
            self.later_than(datetime.fromisoformat(last["event_ts"])),
            primary=last["primary_id"],
            related=[],
            kind=last["record_type"],
            op="delete",
        )

    def revival(self, tenant: str) -> bool:
        """An upsert of a deleted record: it starts again from an empty payload."""
        candidates = [r for r in self.deleted(tenant) if (tenant, r) not in self.touched]
        if not candidates:
            return False
        record_id = self.rng.choice(candidates)
        last_at = max(
            datetime.fromisoformat(m["event_ts"]) for m in self.events[(tenant, record_id)]
        )
        self.record(
            tenant,
            record_id,
            self.later_than(last_at),
            primary=self.some_identity(tenant),
            related=[self.some_identity(tenant)],
            kind=self.rng.choice(TENANT_RECORD_TYPES[tenant]),
        )
        self.kinds["revival"] += 1
        return True

    def rename(self, tenant: str) -> None:
        """A rename onto another known identity or a fresh one; one in four is executed before
        the newest renames (a late rename)."""
        known = self.identities(tenant)
        from_id = self.rng.choice(known)
        to_id = self.rng.choice(known) if self.rng.random() < 0.5 else self.fresh_identity(tenant)
        minute = next(self.rename_minutes)
        if self.rng.random() < 0.25:
            minute = self.rng.randint(1, minute)
        message = {
            "tenant_id": tenant,
            "from_id": from_id,
            "to_id": to_id,
            "executed_ts": ts(RENAMES_FROM + timedelta(minutes=minute)),
            "seq": next(self.seq),
        }
        self.renames.append(message)
        self.part["id_mutations"].append(message)
        self.kinds["rename"] += 1

    def name(self, tenant: str, identity: str, value: str | None) -> None:
        message = {
            "tenant_id": tenant,
            "id": identity,
            "name": value,
            "updated_ts": ts(NAMES_FROM + timedelta(minutes=next(self.name_minutes))),
            "seq": next(self.seq),
        }
        self.names.setdefault((tenant, identity), []).append(message)
        self.part["entity_names"].append(message)

    def name_change(self, tenant: str) -> None:
        self.name(tenant, self.some_identity(tenant, fresh_share=0.0), self.rng.choice(NAMES))
        self.kinds["name change"] += 1

    def name_removal(self, tenant: str) -> bool:
        named = sorted(i for i, name in self.current_names(tenant).items() if name is not None)
        if not named:
            return False
        self.name(tenant, self.rng.choice(named), None)
        self.kinds["name removal"] += 1
        return True

    def merge(self, tenant: str, kept_apart: tuple[str, ...] = ()) -> tuple[str, str] | None:
        """A new record whose related ids are identities of two current profiles (neither the
        profile of a canonical identity in `kept_apart`)."""
        profiles, mapping = self.profiles(tenant), self.canonical(tenant)
        avoided = {profiles.get(identity) for identity in kept_apart}
        members: dict[str, list[str]] = {}
        for identity in self.identities(tenant):
            profile = profiles[mapping[identity]]
            if profile not in avoided:
                members.setdefault(profile, []).append(identity)
        if len(members) < 2:
            return None
        first, second = self.rng.sample(sorted(members), 2)
        joined = (self.rng.choice(members[first]), self.rng.choice(members[second]))
        self.record(
            tenant,
            f"r{next(self.fresh)}",
            self.recent() if self.rng.random() < 0.5 else self.old(),
            primary=self.fresh_identity(tenant),
            related=sorted(joined),
            kind=self.rng.choice(TENANT_RECORD_TYPES[tenant]),
        )
        return joined

    def split(self, tenant: str) -> tuple[str, str] | None:
        """A delete of a live record without which the other identities of its profile fall
        into two profiles or more."""
        before = self.profiles(tenant)
        mapping = self.canonical(tenant)
        live = self.live(tenant)
        for record_id in self.rng.sample(
            self.untouched_live(tenant), len(self.untouched_live(tenant))
        ):
            profile = before[mapping[live[record_id]["primary_id"]]]
            after = self.profiles(tenant, without=record_id)
            parts: dict[str, str] = {}
            for identity in sorted(after):
                if before.get(identity) == profile:
                    parts.setdefault(after[identity], identity)
            if len(parts) >= 2:
                self.delete_record(tenant, record_id)
                first, second = sorted(parts.values())[:2]
                return first, second
        return None

    # ---------- the parts

    def begin_part(self) -> None:
        self.part = {"records": [], "id_mutations": [], "entity_names": []}
        self.touched = set()

    def end_part(self) -> None:
        self.parts.append(self.part)

    def write_base(self) -> None:
        """A few dozen records per tenant, one recent and one older than a week at least, with
        a few renames and names."""
        self.begin_part()
        for tenant in TENANT_RECORD_TYPES:
            self.new_record(tenant, self.recent())
            self.new_record(tenant, self.old())
            for _ in range(RECORDS_PER_TENANT - 2):
                self.new_record(tenant)
            for _ in range(2):
                self.rename(tenant)
            for _ in range(4):
                self.name_change(tenant)
        self.kinds.clear()
        self.end_part()

    def write_tenant_run(self, tenant: str) -> None:
        """A part of one tenant's changes: a run that may recompute that tenant alone."""
        self.begin_part()
        self.new_record(tenant)
        assert self.update(tenant) is not False
        assert self.delete(tenant) is not False
        self.rename(tenant)
        self.name_change(tenant)
        self.end_part()

    def write_run(self, number: int) -> None:
        """One part with every kind of change; the split and the merge come last, aimed at
        the state the other changes lead to (and the merge leaves the split's parts apart)."""
        self.begin_part()
        tenants = sorted(TENANT_RECORD_TYPES)
        changes: list[Callable[[str], Any]] = [
            self.new_record,
            self.new_record,
            self.update,
            self.update,
            self.update,
            self.delete,
            self.rename,
            self.name_change,
            self.name_change,
            self.name_removal,
        ]
        if number == 1:
            changes.append(lambda tenant: self.update(tenant, late=True))
        else:
            changes.append(self.revival)
        self.rng.shuffle(changes)
        for change in changes:
            # a random tenant, or the next one where the change can be made (a revival needs
            # a deleted record)
            made = any(change(t) is not False for t in self.rng.sample(tenants, len(tenants)))
            assert made, (change, number)
        split_tenant, split = "", None
        if number > 1:
            for split_tenant in self.rng.sample(tenants, len(tenants)):
                split = self.split(split_tenant)
                if split is not None:
                    break
            assert split is not None, f"seed {SEED}: no profile to split in run {number}"
        for merge_tenant in self.rng.sample(tenants, len(tenants)):
            kept_apart = split if split is not None and merge_tenant == split_tenant else ()
            joined = self.merge(merge_tenant, kept_apart)
            if joined is not None:
                break
        assert joined is not None, f"seed {SEED}: no two profiles to merge in run {number}"
        # the aims, on the state the whole part leads to
        profiles, mapping = self.profiles(merge_tenant), self.canonical(merge_tenant)
        assert profiles[mapping[joined[0]]] == profiles[mapping[joined[1]]], joined
        self.kinds["merge"] += 1
        if split is not None:
            profiles = self.profiles(split_tenant)
            assert profiles[split[0]] != profiles[split[1]], split
            self.kinds["split"] += 1
        self.end_part()


def micros(moment: str) -> int:
    parsed = datetime.fromisoformat(moment)
    return int(parsed.timestamp()) * 1_000_000 + parsed.microsecond


# ---------- reading the lakes


def normalized(value: Any) -> Any:
    """A value comparable and sortable whatever its type: maps and structs (dicts) as sorted
    items, arrays as tuples."""
    if isinstance(value, dict):
        return tuple(sorted((key, normalized(item)) for key, item in value.items()))
    if isinstance(value, list):
        return tuple(normalized(item) for item in value)
    return value


def table_rows(spark, table: str, left_out: tuple[str, ...]) -> list[dict]:
    schema, name = table.split(".")
    if name == "int_tenant_batches":
        frame = spark.sql(SUMMED_BATCHES.format(schema=schema))
    elif name.startswith("int_"):
        frame = spark.table(f"{schema}_intermediate.{name}")
    else:
        frame = spark.table(table)
    rows = []
    for row in frame.collect():
        values = {k: v for k, v in row.asDict(recursive=True).items() if k not in left_out}
        if "payload" in values:  # the merged JSON: compared as JSON, not as text
            values["payload"] = json.dumps(json.loads(values["payload"]), sort_keys=True)
        rows.append({key: normalized(value) for key, value in values.items()})
    return sorted(rows, key=repr)


def rows_diff(name: str, incremental: list[dict], full: list[dict], shown: int = 8) -> str:
    """The first differences of two tables' rows, by key."""
    key_columns = COMPARED[name][0]

    def by_key(rows: list[dict]) -> dict[tuple, list[dict]]:
        keyed: dict[tuple, list[dict]] = {}
        for row in rows:
            keyed.setdefault(tuple(row[c] for c in key_columns), []).append(row)
        return keyed

    left, right = by_key(incremental), by_key(full)
    lines = [f"{name}: {len(incremental)} rows incremental, {len(full)} rows full refresh"]
    for key in sorted(left.keys() | right.keys(), key=repr):
        mine, theirs = left.get(key, []), right.get(key, [])
        if mine == theirs:
            continue
        lines.append(f"  key {key}:")
        if not mine or not theirs or len(mine) != 1 or len(theirs) != 1:
            lines.append(f"    incremental: {mine}")
            lines.append(f"    full:        {theirs}")
        else:
            for column in mine[0]:
                if mine[0][column] != theirs[0][column]:
                    found, expected = mine[0][column], theirs[0][column]
                    lines.append(f"    {column}: incremental {found!r} != full {expected!r}")
        if len(lines) > 3 * shown:
            lines.append("  ...")
            break
    return "\n".join(lines)


def history(spark, table: str) -> list[dict]:
    return [
        row.asDict(recursive=True)
        for row in spark.sql(f"describe history {table}")
        .select("version", "operation", "operationMetrics")
        .collect()
    ]


def writes_since(spark, table: str, version: int) -> list[dict]:
    """The commits of `table` after `version`, oldest first; a MERGE's with the number of rows
    the table had before it (`rows_before`)."""
    entries = [entry for entry in history(spark, table) if entry["version"] > version]
    for entry in entries:
        if entry["operation"] == "MERGE":
            before = f"select count(*) from {table} version as of {entry['version'] - 1}"
            entry["rows_before"] = spark.sql(before).first()[0]
    return sorted(entries, key=lambda entry: entry["version"])


def latest_versions(spark, schema: str) -> dict[str, int]:
    return {mart: history(spark, f"{schema}.{mart}")[0]["version"] for mart in MARTS}


# ---------- the lakes


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    generated = Scenario(SEED)
    generated.write_base()
    for number, technique in enumerate(RUN_TECHNIQUES, start=1):
        if technique == "tenants":
            generated.write_tenant_run(TENANTS_RUN_TENANT)
        else:
            generated.write_run(number)
    return generated


@pytest.fixture(scope="module")
def lakes(spark, lake_home: Path, tmp_path_factory, scenario: Scenario) -> dict:
    """Lake A: the base built, then one `dbt run` per new part, then one with nothing new,
    then one with nothing new eight days on; lake B: the whole landing in one full refresh,
    then profile_segments rebuilt eight days on."""
    landing = tmp_path_factory.mktemp("incremental-marts-landing")

    def dbt(
        schema: str, args: list[str], at: str = SEGMENT_VARS, env: dict[str, str] | None = None
    ) -> DbtRun:
        return run_dbt(
            [*args, *SELECTION, "--vars", at],
            env={
                "PROFILE_LAKE_SCHEMA": schema,
                "PROFILE_LAKE_LANDING": str(landing),
                **(env or {}),
            },
            target_path=lake_home / "target" / schema,
        )

    incremental, full = "incremental_marts", "incremental_marts_full"
    write_landing(landing, scenario.parts[0], "part-00000")
    dbt(incremental, ["build", *MODELS_ONLY])
    built = latest_versions(spark, incremental)
    versions_after_run = []
    for number, part in enumerate(scenario.parts[1:], start=1):
        write_landing(landing, part, f"part-{number:05d}")
        technique = RUN_TECHNIQUES[number - 1]
        at = json.dumps({**json.loads(SEGMENT_VARS), "mart_technique": technique})
        if technique == "keys":
            # with code generation on, as production compiles on a large lake: the key sets'
            # predicates must compile within the JVM's limits, or Spark logs a stack trace
            with driver_log(spark) as keys_run_log:
                dbt(incremental, ["run"], at=at, env=CODE_GENERATION_ON)
            keys_run = {
                "log": keys_run_log,
                "codegen": spark.conf.get("spark.sql.codegen.wholeStage"),
            }
        else:
            dbt(incremental, ["run"], at=at)
        versions_after_run.append(latest_versions(spark, incremental))
    incremental_rows = {
        name: table_rows(spark, f"{incremental}.{name}", left_out)
        for name, (_, left_out) in COMPARED.items()
    }
    before_quiet_run = latest_versions(spark, incremental)
    dbt(incremental, ["run"], at=at)  # the last run's vars: its nodes' records apply
    after_quiet_run = latest_versions(spark, incremental)
    dbt(incremental, ["run"], at=LATER_VARS)
    dbt(full, ["build", "--full-refresh", *MODELS_ONLY])
    full_rows = {
        name: table_rows(spark, f"{full}.{name}", left_out)
        for name, (_, left_out) in COMPARED.items()
    }
    run_dbt(
        ["run", "--full-refresh", "--select", "profile_segments", "--vars", LATER_VARS],
        env={"PROFILE_LAKE_SCHEMA": full, "PROFILE_LAKE_LANDING": str(landing)},
        target_path=lake_home / "target" / full,
    )
    return {
        "incremental": incremental_rows,
        "full": full_rows,
        "later": {
            lake: table_rows(spark, f"{schema}.profile_segments", ())
            for lake, schema in (("incremental", incremental), ("full", full))
        },
        "later_writes": writes_since(
            spark, f"{incremental}.profile_segments", after_quiet_run["profile_segments"]
        ),
        "built": built,
        "whole_run_writes": {
            mart: writes_since(spark, f"{incremental}.{mart}", versions_after_run[0][mart])
            for mart in ("profiles", "profile_identities", "identity_index")
        },
        "tenants_run": {
            mart: {
                "writes": writes_since(spark, f"{incremental}.{mart}", versions_after_run[1][mart]),
                "tenant_rows": spark.table(f"{incremental}.{mart}")
                .where(f"tenant_id = '{TENANTS_RUN_TENANT}'")
                .count(),
            }
            for mart in ("profiles", "profile_identities", "identity_index")
        },
        "writes": {
            mart: writes_since(spark, f"{incremental}.{mart}", built[mart]) for mart in MARTS
        },
        "before_quiet_run": before_quiet_run,
        "after_quiet_run": after_quiet_run,
        "keys_run": keys_run,
    }


# ---------- the tests


def test_the_scenario_has_every_kind_of_change(scenario: Scenario) -> None:
    assert {kind for kind in KINDS if scenario.kinds[kind] == 0} == set()
    assert len(scenario.parts) == RUNS + 1
    assert all(part["records"] for part in scenario.parts)
    moments = [
        datetime.fromisoformat(message["event_ts"])
        for part in scenario.parts
        for message in part["records"]
    ]
    assert any(EVALUATION_TS - moment < timedelta(days=7) for moment in moments)
    assert any(EVALUATION_TS - moment > timedelta(days=7) for moment in moments)


@pytest.mark.parametrize("table", list(COMPARED))
def test_incremental_runs_equal_a_full_refresh(lakes: dict, table: str) -> None:
    incremental, full = lakes["incremental"][table], lakes["full"][table]
    assert full, table
    assert incremental == full, rows_diff(table, incremental, full)


def test_the_full_refresh_equals_the_python_fold(lakes: dict, scenario: Scenario) -> None:
    """The profiles are the components of the live records (the scenario aimed its merges and
    splits with this fold)."""
    expected = {
        (tenant, identity): profile
        for tenant in TENANT_RECORD_TYPES
        for identity, profile in scenario.profiles(tenant).items()
    }
    found = {
        (row["tenant_id"], row["identity_id"]): row["profile_id"]
        for row in lakes["full"]["profile_identities"]
    }
    assert found == expected


def test_the_clock_segment_has_members_both_ways(lakes: dict) -> None:
    segments = [row["segment_ids"] for row in lakes["full"]["profile_segments"]]
    assert any("active_last_7_days" in ids for ids in segments)
    assert any("active_last_7_days" not in ids for ids in segments)


def test_the_runs_after_the_first_build_merged_what_changed(lakes: dict) -> None:
    """After the first build every write of a mart is a MERGE (or the stamp of the versions it
    consumed), never a table written anew; profiles, profile_identities and identity_index
    recomputed fewer keys than they held in some run (a recomputation of every key reads
    them all, and the new ones)."""
    for mart, writes in lakes["writes"].items():
        operations = [write["operation"] for write in writes]
        assert "MERGE" in operations, (mart, operations)
        rewrites = [op for op in operations if rewrites_table(Commit(0, op, EVALUATION_TS))]
        assert rewrites == [], (mart, operations)
    for mart in ("profiles", "profile_identities", "identity_index"):
        merges = [
            (int(write["operationMetrics"]["numSourceRows"]), write["rows_before"])
            for write in lakes["writes"][mart]
            if write["operation"] == "MERGE"
        ]
        assert any(source < before for source, before in merges), (mart, merges)


def test_the_whole_technique_recomputed_every_key_and_merged_what_changed(lakes: dict) -> None:
    """The run forced to `whole` MERGEd its full build: every row the table had was either in
    its source or deleted as no longer selected, and, like every run, it updated only the rows
    that differ: its changes are what the changed keys would have written."""
    for mart, writes in lakes["whole_run_writes"].items():
        merges = [write for write in writes if write["operation"] == "MERGE"]
        assert merges, (mart, writes)
        merge = merges[0]
        metrics = merge["operationMetrics"]
        unselected = int(metrics["numTargetRowsNotMatchedBySourceDeleted"])
        assert int(metrics["numSourceRows"]) + unselected >= merge["rows_before"], (mart, metrics)
        assert int(metrics["numTargetRowsUpdated"]) < merge["rows_before"], (mart, metrics)


def test_the_tenants_technique_recomputed_the_tenant_written_alone(lakes: dict) -> None:
    """The run forced to `tenants`, on a part of one tenant's changes, MERGEd the full build of
    that tenant alone: its source rows are the tenant's rows (and those it deleted), fewer than
    the table held, and no other tenant's row was deleted as unselected."""
    for mart, run in lakes["tenants_run"].items():
        merges = [write for write in run["writes"] if write["operation"] == "MERGE"]
        assert merges, (mart, run["writes"])
        metrics = merges[0]["operationMetrics"]
        source = int(metrics["numSourceRows"])
        deleted = int(metrics["numTargetRowsNotMatchedBySourceDeleted"])
        assert source == run["tenant_rows"], (mart, metrics, run["tenant_rows"])
        assert source + deleted < merges[0]["rows_before"], (mart, metrics)


def test_the_changed_keys_compile_without_a_java_stack_trace(lakes: dict) -> None:
    """The run forced to `keys` ran with code generation on, and the driver logged no error:
    no plan failed to compile and fell back (Spark logs each such plan with its stack trace on
    the console)."""
    assert lakes["keys_run"]["codegen"] == "true"
    assert lakes["keys_run"]["log"].text == ""


def test_a_run_with_no_new_files_writes_no_mart_version(lakes: dict) -> None:
    assert lakes["after_quiet_run"] == lakes["before_quiet_run"]


def test_eight_days_on_the_clock_segments_equal_a_full_evaluation(lakes: dict) -> None:
    """Nothing new lands, and eight days pass: the incremental run re-evaluates the profiles
    whose next_change_ts has come, and equals segments evaluated anew for every profile."""
    incremental, full = lakes["later"]["incremental"], lakes["later"]["full"]
    assert incremental == full, rows_diff("profile_segments", incremental, full)
    before = {
        (row["tenant_id"], row["profile_id"]): row["segment_ids"]
        for row in lakes["full"]["profile_segments"]
    }
    after = {(row["tenant_id"], row["profile_id"]): row["segment_ids"] for row in full}
    flipped = [key for key in after if before[key] != after[key]]
    assert flipped, "eight days on, no profile left or joined a clock segment"
    assert len(flipped) < len(after)
    merges = [write for write in lakes["later_writes"] if write["operation"] == "MERGE"]
    assert len(merges) == 1, lakes["later_writes"]
    # the profiles due, not every profile
    assert int(merges[0]["operationMetrics"]["numSourceRows"]) < len(after)
