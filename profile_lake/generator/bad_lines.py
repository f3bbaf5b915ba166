"""Bad lines: every kind of bad input of SPEC.md section 3, with the error codes it must raise.

A bad line starts as a good message of its stream; recipes break it at one stage. Parse
problems stop there; convert problems are all listed and hide any validate problem on the same
line; validate problems are all listed (some lines carry two or three).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from profile_lake.generator.emission import Batch
from profile_lake.generator.names import MAX_NAME, random_name
from profile_lake.generator.payloads import dumps
from profile_lake.generator.records import MAX_RECORD_ID, RecordPlan
from profile_lake.generator.tenants import TENANTS_BY_NAME, Tenant
from profile_lake.generator.timestamps import DAY, SECOND, ZONES, format_instant, to_micros

TS_FIELD = {"records": "event_ts", "id_mutations": "executed_ts", "entity_names": "updated_ts"}
REQUIRED = {
    "records": (
        "tenant_id", "record_id", "op", "event_ts", "seq", "record_type", "primary_id", "payload",
    ),
    "id_mutations": ("tenant_id", "from_id", "to_id", "executed_ts", "seq"),
    "entity_names": ("tenant_id", "id", "name", "updated_ts", "seq"),
}  # fmt: skip
IDENTITY_FIELDS = {
    "records": ("primary_id", "related_ids"),
    "id_mutations": ("from_id", "to_id"),
    "entity_names": ("id",),
}
BAD_IDENTITIES: tuple[str, ...] = (
    "email",  # no namespace separator
    "fax:+15550100",  # unknown namespace
    "Email:anna@example.com",  # namespaces are lower case
    "email:",  # empty value
    ":anna@example.com",  # empty namespace
    "cookie:" + "c" * 257,  # value too long
    "",
)
BAD_TIMESTAMPS: tuple[str, ...] = (
    "2025-12-01T10:00:00",  # no zone
    "2025-12-01T10:00:00.123456",  # no zone
    "2025-12-01 10:00:00",  # no zone
    "2025-12-01",  # no time, no zone
    "2025-02-30T10:00:00Z",  # no such day
    "2025-12-01T25:61:00Z",  # no such time
    "yesterday",
    "1733050000",
    "12/01/2025 10:00:00 +0000",
    "",
)
WRONG_TYPES: dict[str, tuple[Any, ...]] = {
    "tenant_id": (42, ["acme"]),
    "record_id": (12345, {"id": "prof-0000001"}),
    "op": (1, True),
    "seq": ("3", "17", 2.5, True, [1]),
    "record_type": (7, ["profile"]),
    "identity": ({"namespace": "email", "value": "anna@example.com"}, 42),
    "related_ids": ("email:anna@example.com", {"0": "email:anna@example.com"}, [42]),
    "payload": ([1, 2, 3], '{"tier":"gold"}', 42),
    "name": (42, ["Anna"], {"first": "Anna"}, False),
    "timestamp": (1733050000, ["2025-12-01T10:00:00Z"]),
}
BAD_TENANT_IDS: tuple[str, ...] = ("Acme", "acme-eu", "", "a" * 65, "acme corp", "acmé")
UNKNOWN_TENANTS: tuple[str, ...] = ("nosuchtenant", "acme2", "globex_eu", "tenant_0042")
BAD_OPS: tuple[str, ...] = ("insert", "UPSERT", "merge", "", "del", "update")
INVALID_UTF8: tuple[bytes, ...] = (
    b"\xe9",  # Latin-1 e-acute
    b"\xff\xfe",
    b"\xc0\xaf",  # overlong encoding of '/'
    b"\xed\xa0\x80",  # an encoded UTF-16 surrogate
    b"\xe2\x82",  # a truncated sequence
    b"\x80",  # a lone continuation byte
)
UTF8_MARK = "\u2603MARK\u2603"
YEAR_2999 = to_micros(datetime(2999, 1, 1, tzinfo=UTC))


@dataclass(frozen=True)
class BadLine:
    """One bad line and the error codes (sorted, one per problem) it must be reported with."""

    line: bytes
    codes: tuple[str, ...]
    stage: str
    recipe: str
    tenant_id: str | None


@dataclass(frozen=True)
class BadContext:
    """Real tenants, records and identities to build realistic bad lines from."""

    tenants: tuple[Tenant, ...]
    records: dict[str, list[RecordPlan]]
    identities: dict[str, list[str]]
    batch: Batch


@dataclass
class Draft:
    """A message being broken: fields already broken are not broken twice."""

    stream: str
    msg: dict[str, Any]
    tenant: Tenant
    touched: set[str] = field(default_factory=set)

    def touch(self, *names: str) -> None:
        """Mark fields broken; `op` and `payload` go together (payload's rule depends on op)."""
        self.touched.update(names)
        if "op" in names or "payload" in names:
            self.touched.update(("op", "payload"))

    def pick(self, rng: random.Random, fields: tuple[str, ...]) -> str:
        free = [name for name in fields if name in self.msg and name not in self.touched]
        name = rng.choice(free)
        self.touch(name)
        return name


# ---------- good messages to start from


def _instant(rng: random.Random, batch: Batch) -> str:
    micros = rng.randrange(batch.earliest, batch.ingest_base)
    return format_instant(micros - micros % 1000, rng.randrange(len(ZONES)), 3)


def _identities(rng: random.Random, ctx: BadContext, tenant: str, count: int) -> list[str]:
    pool = ctx.identities.get(tenant) or []
    if len(pool) >= count:
        return rng.sample(pool, count)
    return [f"email:someone{index}@example.com" for index in range(count)]


def base_message(rng: random.Random, stream: str, ctx: BadContext) -> Draft:
    """A good message of the stream, for a real tenant (and a real record or identity)."""
    tenant = rng.choice(ctx.tenants)
    seq = ctx.batch.seq_base + rng.randint(0, 9)
    ts = _instant(rng, ctx.batch)
    if stream == "records":
        records = ctx.records.get(tenant.name)
        record = rng.choice(records) if records else None
        msg: dict[str, Any] = {
            "tenant_id": tenant.name,
            "record_id": record.record_id if record else "prof-bad",
            "op": "upsert",
            "event_ts": ts,
            "seq": seq,
            "record_type": record.record_type if record else tenant.record_types[0],
            "primary_id": record.primary_id if record else _identities(rng, ctx, tenant.name, 1)[0],
            "related_ids": list(record.related_ids[:3]) if record else [],
            "payload": {"tier": "gold", "visits": rng.randint(1, 99), "tags": ["bad", "line"]},
        }
    elif stream == "id_mutations":
        from_id, to_id = _identities(rng, ctx, tenant.name, 2)
        msg = {"tenant_id": tenant.name, "from_id": from_id, "to_id": to_id, "executed_ts": ts}
        msg["seq"] = seq
    else:
        identity = _identities(rng, ctx, tenant.name, 1)[0]
        msg = {"tenant_id": tenant.name, "id": identity, "name": random_name(rng)}
        msg |= {"updated_ts": ts, "seq": seq}
    return Draft(stream, msg, tenant)


# ---------- validate problems: each breaks one rule and returns its code

Mutator = Callable[[random.Random, Draft], str]


def _tenant_independent(draft: Draft) -> None:
    """With an unusable tenant, keep what depends on the tenant valid under any default."""
    draft.touch("tenant_id")
    if draft.stream == "records":
        draft.msg["record_type"] = "profile"


def invalid_tenant_id(rng: random.Random, draft: Draft) -> str:
    draft.msg["tenant_id"] = rng.choice(BAD_TENANT_IDS)
    _tenant_independent(draft)
    return "invalid_tenant_id"


def unknown_tenant(rng: random.Random, draft: Draft) -> str:
    draft.msg["tenant_id"] = rng.choice(UNKNOWN_TENANTS)
    _tenant_independent(draft)
    return "unknown_tenant"


def invalid_record_id(rng: random.Random, draft: Draft) -> str:
    draft.touch("record_id")
    draft.msg["record_id"] = rng.choice(("", "r" * rng.randint(MAX_RECORD_ID + 1, 400)))
    return "invalid_record_id"


def invalid_op(rng: random.Random, draft: Draft) -> str:
    draft.touch("op")
    draft.msg["op"] = rng.choice(BAD_OPS)
    return "invalid_op"


def event_ts_in_future(rng: random.Random, draft: Draft) -> str:
    """An instant in the year 2999 (in any zone)."""
    draft.touch("event_ts")
    micros = YEAR_2999 + rng.randrange(DAY, 360 * DAY) // SECOND * SECOND
    draft.msg["event_ts"] = format_instant(micros, rng.randrange(len(ZONES)), 0)
    return "event_ts_in_future"


def negative_seq(rng: random.Random, draft: Draft) -> str:
    draft.touch("seq")
    draft.msg["seq"] = -rng.randint(1, 1000)
    return "negative_seq"


def invalid_record_type(rng: random.Random, draft: Draft) -> str:
    draft.touch("record_type")
    others = [name for name in ("order", "invoice", "Profile", "events", "") if name not in
              draft.tenant.record_types]  # fmt: skip
    draft.msg["record_type"] = rng.choice(others)
    return "invalid_record_type"


def invalid_identity(rng: random.Random, draft: Draft) -> str:
    name = draft.pick(rng, IDENTITY_FIELDS[draft.stream])
    bad = rng.choice(BAD_IDENTITIES)
    if name == "related_ids":
        related = draft.msg["related_ids"] or ["email:friend@example.com"]
        related[rng.randrange(len(related))] = bad
        draft.msg["related_ids"] = related
    else:
        draft.msg[name] = bad
    return "invalid_identity"


def too_many_related_ids(rng: random.Random, draft: Draft) -> str:
    draft.touch("related_ids")
    count = rng.randint(101, 140)
    draft.msg["related_ids"] = [f"cookie:bulk{index:04d}" for index in range(count)]
    return "too_many_related_ids"


def payload_too_large(rng: random.Random, draft: Draft) -> str:
    """Over globex's 64 KiB limit, whatever the serializer (ASCII only, few separators)."""
    globex = TENANTS_BY_NAME["globex"]
    draft.tenant = globex
    draft.touch("tenant_id", "payload", "record_type")
    draft.msg["tenant_id"] = globex.name
    draft.msg["record_type"] = rng.choice(globex.record_types)
    size = globex.max_payload_bytes + rng.randint(1_000, 12_000)
    if rng.random() < 0.5:
        draft.msg["payload"] = {"blob": "x" * size}
    else:
        chunk = "0123456789abcdef" * 64
        draft.msg["payload"] = {"chunks": {f"c{i:03d}": chunk for i in range(size // 1024 + 1)}}
    return "payload_too_large"


def name_too_long(rng: random.Random, draft: Draft) -> str:
    draft.touch("name")
    length = rng.randint(MAX_NAME + 1, 3 * MAX_NAME)
    text = ""
    while len(text) < length:
        text += random_name(rng) + " "
    draft.msg["name"] = text[:length]
    return "name_too_long"


# ---------- convert problems


def missing_field(rng: random.Random, draft: Draft) -> str:
    del draft.msg[draft.pick(rng, REQUIRED[draft.stream])]
    return "missing_field"


def wrong_type(rng: random.Random, draft: Draft) -> str:
    name = draft.pick(rng, (*REQUIRED[draft.stream], "related_ids"))
    if name in IDENTITY_FIELDS[draft.stream] and name != "related_ids":
        kind = "identity"
    elif name == TS_FIELD[draft.stream]:
        kind = "timestamp"
    else:
        kind = name
    draft.msg[name] = rng.choice(WRONG_TYPES[kind])
    return "wrong_type"


def invalid_timestamp(rng: random.Random, draft: Draft) -> str:
    name = TS_FIELD[draft.stream]
    draft.touch(name)
    draft.msg[name] = rng.choice(BAD_TIMESTAMPS)
    return "invalid_timestamp"


# ---------- parse problems: the bytes of the line


def _text(draft: Draft) -> str:
    return dumps(draft.msg)


def invalid_utf8_line(rng: random.Random, draft: Draft) -> bytes:
    if draft.stream == "records":
        draft.msg["payload"]["city"] = "Montr" + UTF8_MARK + "al"
    elif draft.stream == "id_mutations":
        draft.msg["to_id"] = "email:j" + UTF8_MARK + "rgen@example.com"
    else:
        draft.msg["name"] = "Zo" + UTF8_MARK + " M"
    return _text(draft).encode().replace(UTF8_MARK.encode(), rng.choice(INVALID_UTF8))


def invalid_json_line(rng: random.Random, draft: Draft) -> bytes:
    text = _text(draft)
    variants: tuple[Callable[[], str], ...] = (
        lambda: text[: rng.randint(len(text) // 3, len(text) - 2)],  # truncated
        lambda: text[:-1] + ",}",  # trailing comma
        lambda: text.replace('"', "'"),  # single quotes
        lambda: re.sub(r'"(\w+)":', r"\1:", text),  # unquoted keys
        lambda: text + text,  # two messages on one line
        lambda: text[:-1],  # no closing brace
        lambda: text[:-1] + ',"score":NaN}',  # NaN is not JSON
        lambda: f"tenant_id={draft.tenant.name} seq=1 op=upsert",  # not JSON at all
    )
    return rng.choice(variants)().encode()


def not_an_object_line(rng: random.Random, draft: Draft) -> bytes:
    text = _text(draft)
    variants = ("[" + text + "]", "[]", dumps(draft.tenant.name), "42", "null", "true", "3.5")
    return rng.choice(variants).encode()


def _second_value(rng: random.Random, name: str, value: Any) -> Any:
    """The value a duplicated field has the second time: the same, or another valid one."""
    if rng.random() < 0.5:
        return value
    if name == "seq":
        return value + 1
    if name == "tenant_id":
        return rng.choice([tenant for tenant in TENANTS_BY_NAME if tenant != value])
    return value


def duplicate_key_line(rng: random.Random, draft: Draft) -> bytes:
    text = _text(draft)
    name = rng.choice([key for key in draft.msg if key != "payload"])
    member = f"{dumps(name)}:{dumps(_second_value(rng, name, draft.msg[name]))}"
    if rng.random() < 0.5:
        return ("{" + member + "," + text[1:]).encode()
    return (text[:-1] + "," + member + "}").encode()


ParseFn = Callable[[random.Random, Draft], bytes]


# ---------- recipes


@dataclass(frozen=True)
class Recipe:
    """How to break a good message, and for which streams."""

    name: str
    streams: tuple[str, ...]
    parse: tuple[str, ParseFn] | None = None
    convert: tuple[Mutator, ...] = ()
    validate: tuple[Mutator, ...] = ()  # listed unless a convert problem hides them
    hidden: tuple[Mutator, ...] = ()  # validate problems a convert problem hides


ALL = ("records", "id_mutations", "entity_names")
RECORDS = ("records",)
MUTATIONS = ("id_mutations",)
NAMES = ("entity_names",)
RECIPES: tuple[Recipe, ...] = (
    Recipe("invalid_utf8", ALL, parse=("invalid_utf8", invalid_utf8_line)),
    Recipe("invalid_json", ALL, parse=("invalid_json", invalid_json_line)),
    Recipe("not_an_object", ALL, parse=("not_an_object", not_an_object_line)),
    Recipe("duplicate_key", ALL, parse=("duplicate_key", duplicate_key_line)),
    Recipe("missing_field", ALL, convert=(missing_field,)),
    Recipe("wrong_type", ALL, convert=(wrong_type,)),
    Recipe("invalid_timestamp", ALL, convert=(invalid_timestamp,)),
    Recipe("missing_field+wrong_type", ALL, convert=(missing_field, wrong_type)),
    Recipe("wrong_type x2", ALL, convert=(wrong_type, wrong_type)),
    Recipe("invalid_timestamp hides negative_seq", ALL, convert=(invalid_timestamp,),
           hidden=(negative_seq,)),
    Recipe("missing_field hides unknown_tenant", ALL, convert=(missing_field,),
           hidden=(unknown_tenant,)),
    Recipe("wrong_type hides invalid_op", RECORDS, convert=(wrong_type,), hidden=(invalid_op,)),
    Recipe("invalid_tenant_id", ALL, validate=(invalid_tenant_id,)),
    Recipe("unknown_tenant", ALL, validate=(unknown_tenant,)),
    Recipe("negative_seq", ALL, validate=(negative_seq,)),
    Recipe("invalid_identity", ALL, validate=(invalid_identity,)),
    Recipe("invalid_record_id", RECORDS, validate=(invalid_record_id,)),
    Recipe("invalid_op", RECORDS, validate=(invalid_op,)),
    Recipe("event_ts_in_future", RECORDS, validate=(event_ts_in_future,)),
    Recipe("invalid_record_type", RECORDS, validate=(invalid_record_type,)),
    Recipe("too_many_related_ids", RECORDS, validate=(too_many_related_ids,)),
    Recipe("payload_too_large", RECORDS, validate=(payload_too_large,)),
    Recipe("name_too_long", NAMES, validate=(name_too_long,)),
    Recipe("invalid_op+negative_seq", RECORDS, validate=(invalid_op, negative_seq)),
    Recipe("future+record_type+seq", RECORDS,
           validate=(event_ts_in_future, invalid_record_type, negative_seq)),
    Recipe("record_id+identity", RECORDS, validate=(invalid_record_id, invalid_identity)),
    Recipe("too_many_related+op", RECORDS, validate=(too_many_related_ids, invalid_op)),
    Recipe("payload_too_large+seq", RECORDS, validate=(payload_too_large, negative_seq)),
    Recipe("unknown_tenant+op", RECORDS, validate=(unknown_tenant, invalid_op)),
    Recipe("identity+seq", MUTATIONS, validate=(invalid_identity, negative_seq)),
    Recipe("unknown_tenant+identity", MUTATIONS, validate=(unknown_tenant, invalid_identity)),
    Recipe("tenant_id+seq", MUTATIONS, validate=(invalid_tenant_id, negative_seq)),
    Recipe("name_too_long+seq", NAMES, validate=(name_too_long, negative_seq)),
    Recipe("name+identity+seq", NAMES, validate=(name_too_long, invalid_identity, negative_seq)),
    Recipe("tenant_id+identity", NAMES, validate=(invalid_tenant_id, invalid_identity)),
)  # fmt: skip


def _readable_tenant(draft: Draft) -> str | None:
    value = draft.msg.get("tenant_id")
    return value if isinstance(value, str) else None


def build_bad_line(rng: random.Random, recipe: Recipe, stream: str, ctx: BadContext) -> BadLine:
    """One bad line of `stream` made by `recipe`."""
    draft = base_message(rng, stream, ctx)
    if recipe.parse is not None:
        code, make = recipe.parse
        return BadLine(make(rng, draft), (code,), "parse", recipe.name, None)
    codes = [mutate(rng, draft) for mutate in recipe.validate]
    for mutate in recipe.hidden:
        mutate(rng, draft)
    convert_codes = [mutate(rng, draft) for mutate in recipe.convert]
    stage = "convert" if convert_codes else "validate"
    codes = convert_codes or codes
    line = _text(draft).encode()
    return BadLine(line, tuple(sorted(codes)), stage, recipe.name, _readable_tenant(draft))


def recipe_cycle(rng: random.Random, stream: str) -> list[Recipe]:
    """One round of the stream's recipes: its own recipes first, then the shared ones."""
    own = [recipe for recipe in RECIPES if recipe.streams == (stream,)]
    shared = [recipe for recipe in RECIPES if stream in recipe.streams and len(recipe.streams) > 1]
    rng.shuffle(own)
    rng.shuffle(shared)
    return own + shared


def plan_bad_lines(rng: random.Random, stream: str, count: int, ctx: BadContext) -> list[BadLine]:
    """`count` bad lines for a stream, cycling through every recipe that applies to it."""
    lines: list[BadLine] = []
    cycle: list[Recipe] = []
    while len(lines) < count:
        if not cycle:
            cycle = recipe_cycle(rng, stream)
        lines.append(build_bad_line(rng, cycle.pop(0), stream, ctx))
    return lines
