"""The landing-data generator: deterministic, true to SPEC.md sections 2-3, honest manifest.

The checker below is written from SPEC.md alone (it imports nothing from the generator), so
every good line is checked against the contract and every bad line's expected error codes are
recomputed independently of the generator.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import re
from collections import Counter, defaultdict
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from profile_lake import cli
from profile_lake.generator import ERROR_CODES, TENANTS, GeneratorConfig, generate
from profile_lake.project import project_var

# ---------- SPEC.md, written out independently

SEED_TENANTS: dict[str, tuple[set[str], int]] = {
    "acme": ({"profile", "event"}, 1_048_576),
    "globex": ({"profile", "event"}, 65_536),
    "initech": ({"profile", "event", "order"}, 1_048_576),
    "umbrella": ({"profile", "event"}, 1_048_576),
    "hooli": ({"profile", "event"}, 1_048_576),
    "stark": ({"profile", "event"}, 1_048_576),
    "wayne": ({"profile", "event"}, 1_048_576),
    "wonka": ({"profile", "event"}, 1_048_576),
}
DEFAULT_TYPES = {"profile", "event"}
NAMESPACES = {"email", "phone", "cookie", "crm", "loyalty", "device"}
TENANT_RE = re.compile(str(project_var("tenant_id_pattern")))
TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$")
STAGES = {
    "parse": {"invalid_utf8", "invalid_json", "not_an_object", "duplicate_key"},
    "convert": {"missing_field", "wrong_type", "invalid_timestamp"},
}
FIELDS: dict[str, dict[str, str]] = {  # field -> kind; "?" marks optional or nullable
    "records": {
        "tenant_id": "str",
        "record_id": "str",
        "op": "str",
        "event_ts": "ts",
        "seq": "int",
        "record_type": "str",
        "primary_id": "str",
        "related_ids": "list?",
        "payload": "payload",
    },
    "id_mutations": {
        "tenant_id": "str",
        "from_id": "str",
        "to_id": "str",
        "executed_ts": "ts",
        "seq": "int",
    },
    "entity_names": {
        "tenant_id": "str",
        "id": "str",
        "name": "str?",
        "updated_ts": "ts",
        "seq": "int",
    },
}
TS_FIELDS = {"records": "event_ts", "id_mutations": "executed_ts", "entity_names": "updated_ts"}
IDENTITY_FIELDS = {"records": ("primary_id",), "id_mutations": ("from_id", "to_id")}
INGEST = datetime.fromisoformat("2026-01-01T00:00:00Z")


class _Object(dict):
    """A parsed JSON object that remembers keys it saw twice."""

    duplicates: list[str]


def _object_hook(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object(pairs)
    obj.duplicates = [key for key, count in Counter(key for key, _ in pairs).items() if count > 1]
    return obj


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_ts(value: str) -> datetime | None:
    if not TS_RE.match(value):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def is_identity(value: Any) -> bool:
    if not isinstance(value, str) or ":" not in value:
        return False
    namespace, rest = value.split(":", 1)
    return namespace in NAMESPACES and 1 <= len(rest) <= 256


def _kind_ok(kind: str, value: Any) -> bool:
    if kind.endswith("?") and value is None:
        return True
    kind = kind.rstrip("?")
    if kind in ("str", "ts"):
        return isinstance(value, str)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "list":
        return isinstance(value, list) and all(isinstance(item, str) for item in value)
    return isinstance(value, dict)  # payload


def convert_codes(stream: str, msg: dict[str, Any]) -> list[str]:
    codes = []
    for name, kind in FIELDS[stream].items():
        if name == "payload" and msg.get("op") != "upsert":
            continue  # ignored unless the op is upsert
        if name not in msg or (msg[name] is None and not kind.endswith("?")):
            if name != "related_ids":
                codes.append("missing_field")
        elif not _kind_ok(kind, msg[name]):
            codes.append("wrong_type")
        elif kind == "ts" and parse_ts(msg[name]) is None:
            codes.append("invalid_timestamp")
    return codes


def validate_codes(stream: str, msg: dict[str, Any]) -> list[str]:
    codes = []
    tenant = SEED_TENANTS.get(msg["tenant_id"])
    if not TENANT_RE.match(msg["tenant_id"]):
        codes.append("invalid_tenant_id")
    elif tenant is None:
        codes.append("unknown_tenant")
    if msg["seq"] < 0:
        codes.append("negative_seq")
    for name in IDENTITY_FIELDS.get(stream, ("id",)):
        if not is_identity(msg[name]):
            codes.append("invalid_identity")
    if stream == "entity_names" and msg["name"] is not None and len(msg["name"]) > 1024:
        codes.append("name_too_long")
    if stream == "records":
        codes += validate_record(msg, tenant)
    return codes


def validate_record(msg: dict[str, Any], tenant: tuple[set[str], int] | None) -> list[str]:
    codes = []
    if not 1 <= len(msg["record_id"]) <= 256:
        codes.append("invalid_record_id")
    if msg["op"] not in ("upsert", "delete"):
        codes.append("invalid_op")
    ts = parse_ts(msg["event_ts"])
    if ts is not None and ts > INGEST + timedelta(days=1):
        codes.append("event_ts_in_future")
    types, max_bytes = tenant or (DEFAULT_TYPES, 1_048_576)
    if msg["record_type"] not in types:
        codes.append("invalid_record_type")
    related = msg.get("related_ids") or []
    codes += ["invalid_identity" for identity in related if not is_identity(identity)]
    if len(related) > 100:
        codes.append("too_many_related_ids")
    if msg["op"] == "upsert":
        size = len(json.dumps(msg["payload"], ensure_ascii=False, separators=(",", ":")).encode())
        if size > max_bytes:
            codes.append("payload_too_large")
    return codes


def check_line(stream: str, raw: bytes) -> tuple[str | None, list[str]]:
    """(stage, sorted error codes) for one line: (None, []) when the line is good."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "parse", ["invalid_utf8"]
    try:
        msg = json.loads(text, object_pairs_hook=_object_hook, parse_constant=_reject_constant)
    except ValueError:
        return "parse", ["invalid_json"]
    if not isinstance(msg, dict):
        return "parse", ["not_an_object"]
    if msg.duplicates:
        return "parse", ["duplicate_key"]
    codes = convert_codes(stream, msg)
    if codes:
        return "convert", sorted(codes)
    codes = validate_codes(stream, msg)
    return ("validate", sorted(codes)) if codes else (None, [])


# ---------- helpers


def read_lines(path: Path) -> list[bytes]:
    data = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
    assert data.endswith(b"\n")
    return data[:-1].split(b"\n")


def landing_files(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def good_messages(root: Path, manifest: dict[str, Any], stream: str) -> list[dict[str, Any]]:
    bad = {(entry["file"], entry["line"]) for entry in manifest["bad_lines"]}
    messages = []
    for entry in manifest["streams"][stream]["files"]:
        for number, raw in enumerate(read_lines(root / entry["file"]), start=1):
            if (entry["file"], number) not in bad:
                messages.append(json.loads(raw))
    return messages


def instant(value: str) -> datetime:
    parsed = parse_ts(value)
    assert parsed is not None, value
    return parsed


MODERATE = {
    "seed": 11,
    "tenants": 3,
    "records_per_tenant": 100,
    "renames_per_tenant": 80,
    "bad_rate": 0.05,
    "lines_per_file": 200,
    "gzip_every": 2,
    "quiet": True,
}


@pytest.fixture(scope="module")
def landed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("landing")
    manifest = generate(GeneratorConfig(out=root, manifest=root.parent / "m.json", **MODERATE))
    return root, manifest


# ---------- tests


def test_tenants_constant_matches_the_seed_facts() -> None:
    assert [tenant.name for tenant in TENANTS] == list(SEED_TENANTS)
    for tenant in TENANTS:
        types, max_bytes = SEED_TENANTS[tenant.name]
        assert set(tenant.record_types) == types
        assert tenant.max_payload_bytes == max_bytes


def test_the_identity_namespaces_var_is_the_contracts() -> None:
    assert sorted(project_var("identity_namespaces")) == sorted(NAMESPACES)


def test_tenants_seed_matches_the_constant() -> None:
    seed = Path(__file__).resolve().parents[2] / "seeds" / "tenants.csv"
    with seed.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["tenant_id"] for row in rows] == [tenant.name for tenant in TENANTS]
    for row, tenant in zip(rows, TENANTS, strict=True):
        assert tuple(row["record_types"].split("|")) == tenant.record_types
        assert int(row["max_payload_bytes"]) == tenant.max_payload_bytes


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path) -> None:
    config = GeneratorConfig(out=tmp_path / "a", manifest=tmp_path / "a.json", **MODERATE)
    generate(config)
    generate(replace(config, out=tmp_path / "b", manifest=tmp_path / "b.json"))
    generate(replace(config, out=tmp_path / "c", manifest=tmp_path / "c.json", seed=12))
    first, second = landing_files(tmp_path / "a"), landing_files(tmp_path / "b")
    assert first == second
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    third = landing_files(tmp_path / "c")
    assert all(first[name] != third.get(name) for name in first)


def test_every_line_is_good_or_bad_as_the_manifest_says(landed: tuple[Path, dict]) -> None:
    root, manifest = landed
    expected = {(entry["file"], entry["line"]): entry for entry in manifest["bad_lines"]}
    checked = 0
    for stream, summary in manifest["streams"].items():
        for entry in summary["files"]:
            for number, raw in enumerate(read_lines(root / entry["file"]), start=1):
                stage, codes = check_line(stream, raw)
                bad = expected.get((entry["file"], number))
                if bad is None:
                    assert codes == [], (entry["file"], number, codes, raw[:300])
                else:
                    assert bad["stream"] == stream
                    assert (stage, codes) == (bad["stage"], bad["error_codes"]), (bad, raw[:300])
                checked += 1
    assert checked == manifest["totals"]["lines"]


def test_every_error_code_appears(landed: tuple[Path, dict]) -> None:
    _, manifest = landed
    seen = Counter(code for entry in manifest["bad_lines"] for code in entry["error_codes"])
    assert set(seen) == set(ERROR_CODES)
    assert len(ERROR_CODES) == 18
    assert seen == manifest["error_code_counts"]
    multi = [entry for entry in manifest["bad_lines"] if len(entry["error_codes"]) >= 2]
    assert {entry["stage"] for entry in multi} >= {"convert", "validate"}
    assert any(len(entry["error_codes"]) == 3 for entry in multi)
    for entry in manifest["bad_lines"]:
        stage_codes = STAGES.get(entry["stage"])
        assert stage_codes is None or set(entry["error_codes"]) <= stage_codes
        assert entry["error_codes"] == sorted(entry["error_codes"])


def test_bad_lines_spread_over_streams_and_files(landed: tuple[Path, dict]) -> None:
    _, manifest = landed
    files_with_bad = {entry["file"] for entry in manifest["bad_lines"]}
    for summary in manifest["streams"].values():
        assert summary["bad"] > 0
        assert len(summary["files"]) >= 2
        for entry in summary["files"]:
            assert entry["file"] in files_with_bad or entry["lines"] < 20
    share = manifest["totals"]["bad"] / manifest["totals"]["lines"]
    assert 0.03 < share < 0.08


def test_manifest_counts_add_up(landed: tuple[Path, dict]) -> None:
    root, manifest = landed
    totals = Counter()
    for stream, summary in manifest["streams"].items():
        bad_per_file = Counter(e["file"] for e in manifest["bad_lines"] if e["stream"] == stream)
        for entry in summary["files"]:
            assert entry["file"].startswith(f"{stream}/part-")
            assert entry["lines"] == entry["good"] + entry["bad"]
            assert entry["lines"] == len(read_lines(root / entry["file"]))
            assert entry["bad"] == bad_per_file[entry["file"]]
            assert entry["lines"] <= MODERATE["lines_per_file"]
        for key in ("lines", "good", "bad", "duplicates"):
            assert summary[key] == sum(entry[key] for entry in summary["files"])
            totals[key] += summary[key]
    for key, value in totals.items():
        assert manifest["totals"][key] == value
    assert sorted(landing_files(root)) == sorted(
        entry["file"] for summary in manifest["streams"].values() for entry in summary["files"]
    )


def test_gzip_files_are_readable(landed: tuple[Path, dict]) -> None:
    root, _ = landed
    packed = sorted(root.rglob("*.jsonl.gz"))
    assert packed
    for path in packed:
        with gzip.open(path) as handle:
            assert handle.read().count(b"\n") >= 1


def test_producers_never_send_two_messages_with_one_pair(landed: tuple[Path, dict]) -> None:
    root, manifest = landed
    keys = {
        "records": lambda m: (m["tenant_id"], m["record_id"], instant(m["event_ts"]), m["seq"]),
        "id_mutations": lambda m: (m["tenant_id"], instant(m["executed_ts"]), m["seq"]),
        "entity_names": lambda m: (m["tenant_id"], m["id"], instant(m["updated_ts"]), m["seq"]),
    }
    for stream, key in keys.items():
        seen: dict[tuple, dict] = {}
        for msg in good_messages(root, manifest, stream):
            assert set(msg) <= set(FIELDS[stream])
            assert seen.setdefault(key(msg), msg) == msg


def test_records_cover_the_cases_of_the_spec(landed: tuple[Path, dict]) -> None:
    root, manifest = landed
    messages = good_messages(root, manifest, "records")
    by_record: dict[tuple, list[tuple[int, dict]]] = defaultdict(list)
    for position, msg in enumerate(messages):
        by_record[msg["tenant_id"], msg["record_id"]].append((position, msg))
    stamps = [msg["event_ts"] for msg in messages]
    assert any(ts.endswith("Z") for ts in stamps)
    assert any(re.search(r"[+-]\d\d:\d\d$", ts) for ts in stamps)
    assert any("." in ts for ts in stamps) and any("." not in ts for ts in stamps)
    assert max(instant(ts) for ts in stamps) < INGEST
    ops = Counter(msg["op"] for msg in messages)
    assert ops["delete"] > 0 and ops["upsert"] > ops["delete"]
    assert {msg["record_type"] for msg in messages if msg["tenant_id"] == "initech"} >= {"order"}
    assert max(len(msg.get("related_ids") or []) for msg in messages) == 100
    assert max(len(msg["record_id"]) for msg in messages) == 256
    assert any(
        "null" in json.dumps(m["payload"]) for m in messages if m["op"] == "upsert"
    )  # a patch that removes keys
    equal_ts = recreated = out_of_order = 0
    for events in by_record.values():
        ordered = sorted(events, key=lambda e: (instant(e[1]["event_ts"]), e[1]["seq"]))
        times = [instant(msg["event_ts"]) for _, msg in ordered]
        equal_ts += len(times) - len(set(times))
        ops_in_order = [msg["op"] for _, msg in ordered]
        recreated += "delete" in ops_in_order[:-1] and ops_in_order[-1] == "upsert"
        out_of_order += [position for position, _ in ordered] != sorted(p for p, _ in ordered)
    assert equal_ts > 0 and recreated > 0 and out_of_order > 0
    assert manifest["streams"]["records"]["duplicates"] > 0


def test_renames_and_names_cover_the_cases_of_the_spec(landed: tuple[Path, dict]) -> None:
    root, manifest = landed
    renames = good_messages(root, manifest, "id_mutations")
    record_ids = {
        identity
        for msg in good_messages(root, manifest, "records")
        for identity in [msg["primary_id"], *(msg.get("related_ids") or [])]
    }
    assert {msg["from_id"] for msg in renames} | {msg["to_id"] for msg in renames} <= record_ids
    pairs = {(msg["tenant_id"], msg["from_id"], msg["to_id"]) for msg in renames}
    assert any(a == b for _, a, b in pairs)  # a no-op
    assert any((t, b, a) in pairs for t, a, b in pairs if a != b)  # a cycle
    targets: dict[tuple[str, str], set[str]] = defaultdict(set)
    for tenant, a, b in pairs:
        targets[tenant, a].add(b)
    assert any(c not in (a, b) for t, a, b in pairs if a != b for c in targets[t, b])  # a chain
    names = good_messages(root, manifest, "entity_names")
    values = [msg["name"] for msg in names]
    assert None in values and "" in values
    assert any(value and not value.isascii() for value in values)
    assert max(len(value or "") for value in values) == 1024


def test_a_later_batch_lands_beside_the_first(tmp_path: Path) -> None:
    config = GeneratorConfig(out=tmp_path / "land", **MODERATE)
    first = generate(config)
    before = {
        name: hashlib.sha256(data).hexdigest() for name, data in landing_files(config.out).items()
    }
    second = generate(config)
    after = landing_files(config.out)
    for name, digest in before.items():
        assert hashlib.sha256(after[name]).hexdigest() == digest
    new = sorted(set(after) - set(before))
    assert new and len(after) == len(before) + len(new)
    assert second["first_part"] > first["first_part"] == 0
    for stream in ("records", "id_mutations", "entity_names"):
        old_names = [n for n in before if n.startswith(stream)]
        new_names = [n for n in new if n.startswith(stream)]
        assert max(old_names) < min(new_names)
    # the same seed and the same existing state give the same batch
    replay = tmp_path / "replay"
    generate(replace(config, out=replay))
    generate(replace(config, out=replay))
    assert landing_files(replay) == after
    # the two batches together still never send two messages with one (ts, seq) pair
    combined = {"streams": {}, "bad_lines": first["bad_lines"] + second["bad_lines"]}
    for stream in first["streams"]:
        files = first["streams"][stream]["files"] + second["streams"][stream]["files"]
        combined["streams"][stream] = {"files": files}
    test_producers_never_send_two_messages_with_one_pair((config.out, combined))


def test_cli_generate(tmp_path: Path) -> None:
    out, manifest = tmp_path / "cli", tmp_path / "manifest.json"
    argv = ["generate", "--out", str(out), "--manifest", str(manifest), "--quiet"]
    assert cli.main([*argv, "--tenants", "2", "--records-per-tenant", "20"]) == 0
    loaded = json.loads(manifest.read_text(encoding="utf-8"))
    assert loaded["options"]["tenants"] == 2
    assert sum(1 for _ in out.rglob("*.jsonl")) == len(landing_files(out))
    assert cli.main([*argv, "--tenants", "9"]) == 2


def test_bundled_sample_matches_its_manifest_and_regenerates(tmp_path: Path) -> None:
    sample = Path(__file__).resolve().parents[2] / "sample"
    manifest = json.loads((sample / "manifest.json").read_text(encoding="utf-8"))
    test_every_line_is_good_or_bad_as_the_manifest_says((sample / "landing", manifest))
    assert set(manifest["error_code_counts"]) == set(ERROR_CODES)
    regenerated = tmp_path / "landing"
    options = {**manifest["options"], "quiet": True}
    generate(GeneratorConfig(out=regenerated, manifest=tmp_path / "m.json", **options))
    # the sample's `erasures/` request is written by hand (sample/README.md), not generated
    bundled = {
        name: content
        for name, content in landing_files(sample / "landing").items()
        if not name.startswith("erasures/")
    }
    assert landing_files(regenerated) == bundled
    assert (tmp_path / "m.json").read_bytes() == (sample / "manifest.json").read_bytes()
