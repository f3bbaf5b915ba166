"""The linking rules scenario's landing files and rules (pytests/integration/identity_lake/).

One case per tenant, each with rules of its own in the lake's identity_rules seed (no `*` row:
the lake's other tenants have no rule):

* collapse_blocked, collapse_limited, collapse_plain: 500 people, each one record linking
  their own email to their own cookie and to `email:test@example.com`; the test email blocked,
  `email` limited to 1, and no rule;
* crm_limited: two CRM ids linked through one device, `crm` limited to 1;
* mixed: a generated graph under every kind of rule, with updates, deletes and renames;
* shuffled_crm_limited, shuffled_mixed: those two again under the same rules, from the same
  lines shuffled and split over the lake's first two runs (`shuffled_parts`).
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

START = datetime(2026, 1, 1, tzinfo=UTC)
PEOPLE = 500
TEST_EMAIL = "email:test@example.com"
RULES_TENANTS = ["collapse_blocked", "collapse_limited", "collapse_plain", "crm_limited", "mixed"]
RULES = [
    ("collapse_blocked", "blocked", "", TEST_EMAIL),
    ("collapse_limited", "namespace_limit", "email", "1"),
    ("crm_limited", "namespace_limit", "crm", "1"),
    ("mixed", "blocked", "", "phone:+1555%"),
    ("mixed", "namespace_limit", "email", "2"),
    ("mixed", "namespace_limit", "crm", "1"),
    ("mixed", "max_identities", "", "6"),
]
# the rules change of the lake's run 4: collapse_plain gets the test email blocked, crm_limited
# loses its rule; the seed keeps them from then on
CHANGED_RULES = [row for row in RULES if row[0] != "crm_limited"] + [
    ("collapse_plain", "blocked", "", TEST_EMAIL)
]
# a bad row (a limit must be a positive integer), after the changed rules: line 9 of the seed
BAD_RULE = ("crm_limited", "namespace_limit", "crm", "0")
SHUFFLED = "shuffled_"  # the order-independence copies' tenants: the same ids, prefixed
SHUFFLED_TENANTS = ("crm_limited", "mixed")
# written after the scenario's own rules, so a row's line number does not depend on them
SHUFFLED_RULES = [
    (SHUFFLED + tenant, *rest) for tenant, *rest in RULES if tenant in SHUFFLED_TENANTS
]


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
    limits bind, phones a pattern blocks), then updates, deletes and three renames; the same
    every call."""
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
# with the rules change: a new record of mixed, so that the run has a new version of records
# to stamp (none of mixed's stored components has its identities)
RULES_CHANGE_RUN = {
    "records": [record("mixed", "extra", "cookie:new1", ["device:new1"], minute=500)],
    "id_mutations": [],
    "entity_names": [],
}


def tenant_rows() -> list[str]:
    """The scenario's rows of the lake's tenants seed."""
    return [
        f"{tenant},profile|event,1048576,1440,100000"
        for tenant in [*RULES_TENANTS, *(SHUFFLED + tenant for tenant in SHUFFLED_TENANTS)]
    ]


def rules_seed(rules: list[tuple[str, str, str, str]]) -> str:
    """The identity_rules seed: `rules`, then the shuffled copies' (which never change)."""
    return "tenant_id,rule,namespace,value\n" + "".join(
        ",".join(row) + "\n" for row in [*rules, *SHUFFLED_RULES]
    )


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
