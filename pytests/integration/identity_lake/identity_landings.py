"""The identity and increments scenarios' landing files (pytests/integration/identity_lake/).

* The identity scenario: one case per tenant of the repository's tenants seed, in the lake's
  runs 1 and 2 (RUN_1, RUN_2);
* the increments scenario: copies of six of those tenants (`inc_acme` ...), with their
  settings: files for the lake's runs 1 and 2 and a run 3 (INCREMENTAL_RUNS), then two for a
  quiet month (QUIET_MONTH_RUNS).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

NOW = datetime.now(UTC).replace(microsecond=0)
RECENT = NOW - timedelta(days=1)
OLD = NOW - timedelta(days=30)


def ts(moment: datetime, minutes: int = 0) -> str:
    return (moment + timedelta(minutes=minutes)).isoformat()


def record(tenant, record_id, primary, related=(), *, op="upsert", at=OLD, seq=0, kind="profile"):
    message = {
        "tenant_id": tenant,
        "record_id": record_id,
        "op": op,
        "event_ts": ts(at),
        "seq": seq,
        "record_type": kind,
        "primary_id": primary,
        "related_ids": list(related),
    }
    if op == "upsert":
        message["payload"] = {"id": record_id}
    return message


def rename(tenant, from_id, to_id, minute, seq=0):
    return {
        "tenant_id": tenant,
        "from_id": from_id,
        "to_id": to_id,
        "executed_ts": ts(OLD, minute),
        "seq": seq,
    }


def name(tenant, identity, value, minute=0):
    return {
        "tenant_id": tenant,
        "id": identity,
        "name": value,
        "updated_ts": ts(OLD, minute),
        "seq": 0,
    }


RUN_1 = {
    "records": [
        # acme: a forward chain a -> b -> c -> d; records arrived with a and b
        record("acme", "r1", "email:a@acme.test", ["cookie:acme1"]),
        record("acme", "r2", "email:b@acme.test"),
        # globex: the same chain executed in reverse; x arrives late (run 2)
        record("globex", "r1", "email:a@globex.test", ["cookie:g1"]),
        # initech: a cycle and a no-op
        record("initech", "r1", "email:a@initech.test"),
        record("initech", "r2", "email:b@initech.test", ["crm:c"]),
        # umbrella: two profiles that a run-2 record joins
        record("umbrella", "r1", "email:p1@u.test", ["cookie:q1"], at=RECENT, kind="event"),
        record("umbrella", "r2", "email:p2@u.test", ["cookie:q2"]),
        record("umbrella", "r2b", "email:p2@u.test", [], seq=1),
        # hooli: one profile that a run-2 delete splits
        record("hooli", "r1", "email:a@h.test", ["cookie:x"]),
        record("hooli", "r2", "email:b@h.test", ["cookie:x"]),
        record("hooli", "r3", "email:b@h.test"),
        # stark and wayne: the same identity strings, never joined across tenants
        record("stark", "r1", "email:same@x.test", ["cookie:s1"]),
        record("wayne", "r1", "email:same@x.test", ["cookie:w1"]),
        record("wayne", "r2", "cookie:s1", ["email:same@x.test"]),
        # wonka: a run-2 rename joins two profiles; records keep their identities
        record("wonka", "r1", "email:old@w.test", ["cookie:w1"], at=RECENT, kind="event"),
        record("wonka", "r2", "email:new@w.test", ["cookie:w2"], at=RECENT, kind="event"),
        record("wonka", "r3", "crm:w3", ["crm:w3"]),  # a self-link
    ],
    "id_mutations": [
        rename("acme", "email:a@acme.test", "email:b@acme.test", 1),
        rename("acme", "email:b@acme.test", "email:c@acme.test", 2),
        rename("acme", "email:c@acme.test", "email:d@acme.test", 3),
        # globex: listed forwards, executed backwards (c->d first)
        rename("globex", "email:a@globex.test", "email:b@globex.test", 3),
        rename("globex", "email:b@globex.test", "email:c@globex.test", 2),
        rename("globex", "email:c@globex.test", "email:d@globex.test", 1),
        rename("initech", "email:a@initech.test", "email:b@initech.test", 1),
        rename("initech", "email:b@initech.test", "email:a@initech.test", 2),
        rename("initech", "crm:c", "crm:c", 3),
    ],
    "entity_names": [
        name("wonka", "email:new@w.test", "Willy"),
        name("wonka", "email:old@w.test", "Old Willy"),
        name("umbrella", "email:p1@u.test", "Alice"),
    ],
}

RUN_2 = {
    "records": [
        record("umbrella", "r3", "crm:u3", ["cookie:q1", "cookie:q2"]),
        record("hooli", "r2", "email:b@h.test", op="delete", at=OLD + timedelta(hours=1)),
        record("acme", "r4", "email:d@acme.test", ["phone:+100"]),
    ],
    "id_mutations": [
        # globex: a late rename, executed before every applied one: x -> a, then a -> b moves x
        rename("globex", "email:x@globex.test", "email:a@globex.test", 0),
        rename("wonka", "email:old@w.test", "email:new@w.test", 5),
        # acme: a newer rename folded onto the stored map; a duplicate of an applied one
        rename("acme", "email:d@acme.test", "email:e@acme.test", 9),
        rename("acme", "email:a@acme.test", "email:b@acme.test", 1),
    ],
    "entity_names": [
        name("umbrella", "email:p1@u.test", "Alicia", 10),
        name("wonka", "email:old@w.test", None, 10),  # removes the name
    ],
}

# the identity scenario's tenants: the repository's seed's, one case each (RUN_1, RUN_2)
IDENTITY_TENANTS = frozenset(
    {"acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "wonka"}
)
# the increments scenario's tenants: copies of six of the identity scenario's, settings and all
INCREMENTS_TENANTS = frozenset(
    {"inc_acme", "inc_globex", "inc_initech", "inc_umbrella", "inc_hooli", "inc_stark"}
)


def increments_tenant_rows(repository_rows: list[str]) -> list[str]:
    """The increments tenants' rows of the tenants seed: a copy of the repository's row (of
    `repository_rows`, the seed without its header) of the tenant each copies."""
    settings = {row.split(",", 1)[0]: row.split(",", 1)[1] for row in repository_rows}
    return sorted(
        f"{tenant},{settings[tenant.removeprefix('inc_')]}" for tenant in INCREMENTS_TENANTS
    )


# inc_acme: profiles merged by a new record, an update and a rename; inc_globex: a late rename
# splits a profile (the old canonical identities' rows do not change), a later record joins two
# of the pieces; inc_initech: a deleted record drops an identity, a rename joins two profiles;
# inc_umbrella: emptied, then back; inc_hooli: never touched after the first run; inc_stark:
# first seen in run 3. Runs 1 and 2 are the lake's runs 1 and 2.
INCREMENTAL_RUNS = [
    {
        "records": [
            record("inc_acme", "a1", "email:a1@a.test", ["cookie:a"]),
            record("inc_acme", "a2", "email:a2@a.test", ["cookie:b"]),
            record("inc_acme", "a3", "crm:a3"),
            record("inc_globex", "b1", "email:x@g.test", ["email:y@g.test"]),
            record("inc_globex", "b2", "email:q1@g.test", ["cookie:s1"]),
            record("inc_globex", "b3", "email:q2@g.test", ["cookie:s2"]),
            record("inc_initech", "g1", "email:g1@i.test", ["cookie:g"]),
            record("inc_initech", "g2", "email:g2@i.test", ["cookie:g"]),
            record("inc_initech", "g3", "email:g3@i.test", ["phone:+300"]),
            record("inc_umbrella", "d1", "email:d1@u.test", ["cookie:d"]),
            record("inc_hooli", "h1", "email:h@h.test", ["cookie:h"]),
        ],
        "id_mutations": [
            rename("inc_globex", "email:x@g.test", "email:q1@g.test", 20),
            rename("inc_globex", "email:y@g.test", "email:q2@g.test", 21),
        ],
        "entity_names": [],
    },
    {
        "records": [
            record("inc_acme", "a4", "phone:+104", ["cookie:a", "cookie:b"]),
            record("inc_acme", "a3", "crm:a3", ["email:a1@a.test"], at=OLD + timedelta(hours=1)),
            record(
                "inc_initech", "g1", "email:g1@i.test", op="delete", at=OLD + timedelta(hours=1)
            ),
            record(
                "inc_umbrella", "d1", "email:d1@u.test", op="delete", at=OLD + timedelta(hours=1)
            ),
        ],
        "id_mutations": [
            # executed before the applied ones: x and y go to w; the q1 and q2 rows stay
            rename("inc_globex", "email:x@g.test", "email:w@g.test", 10),
            rename("inc_globex", "email:y@g.test", "email:w@g.test", 11),
            rename("inc_acme", "email:a1@a.test", "email:a2@a.test", 30),
        ],
        "entity_names": [],
    },
    {
        "records": [
            record("inc_acme", "a5", "loyalty:a5", ["email:a1@a.test"]),
            record("inc_globex", "b4", "email:q1@g.test", ["email:q2@g.test"]),
            record("inc_umbrella", "d2", "email:d1@u.test", ["cookie:d2"]),
            record("inc_stark", "e1", "email:e@s.test", ["cookie:e"]),
        ],
        "id_mutations": [rename("inc_initech", "cookie:g", "phone:+300", 30)],
        "entity_names": [],
    },
]
QUIET_MONTH_RUNS = [
    {
        "records": [record("inc_acme", "a6", "crm:a6", ["cookie:f"])],
        "id_mutations": [],
        "entity_names": [],
    },
    {
        "records": [record("inc_acme", "a7", "crm:a7", ["cookie:f", "crm:a3"])],
        "id_mutations": [],
        "entity_names": [],
    },
]
