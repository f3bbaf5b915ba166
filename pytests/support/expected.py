"""Expected outputs computed from landing files with the pure reference logic: the oracle the
integration tests compare the pipeline's tables with."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path

from profile_lake.jsonmerge import reference_fold, version_of


def landing_lines(landing: Path, stream: str) -> dict[tuple[str, int], bytes]:
    """(file relative to landing, line number) -> raw line, for every line of a stream."""
    lines: dict[tuple[str, int], bytes] = {}
    for path in sorted((landing / stream).glob("*.jsonl*")):
        content = path.read_bytes()
        if path.name.endswith(".gz"):
            content = gzip.decompress(content)
        pieces = content.split(b"\n")
        if pieces and pieces[-1] == b"":
            pieces.pop()
        relative = f"{stream}/{path.name}"
        for number, raw in enumerate(pieces, start=1):
            lines[(relative, number)] = raw.removesuffix(b"\r")
    return lines


def good_messages(landing: Path, stream: str, bad: set[tuple[str, int]]) -> list[dict]:
    """The parsed messages of a stream's lines that are not bad."""
    return [
        json.loads(raw) for key, raw in landing_lines(landing, stream).items() if key not in bad
    ]


def expected_records(messages: list[dict]) -> dict[tuple[str, str], dict]:
    """(tenant, record) -> payload of every live record, by a plain in-order fold."""
    events = defaultdict(list)
    for message in messages:
        version = version_of(message["event_ts"], message["seq"])
        events[(message["tenant_id"], message["record_id"])].append(
            (message["op"], version, message.get("payload"))
        )
    live = {}
    for key, record_events in events.items():
        payload = reference_fold(record_events)
        if payload is not None:
            live[key] = payload
    return live


def requested_identities(landing: Path) -> set[tuple[str, str]]:
    """(tenant, identity) named by the accepted lines of the `erasures/` stream."""
    return {
        (message["tenant_id"], message["identity"])
        for message in (json.loads(raw) for raw in landing_lines(landing, "erasures").values())
    }


def erased_line_keys(landing: Path, stream: str, erased: set[tuple[str, str]]) -> set:
    """(file, line number) of the stream's lines whose primary_id is an erased (tenant,
    identity): the whole subject of a request whose identity the lake had not seen before
    (SPEC.md section 7), as the bundled sample's request is."""
    found = set()
    for key, raw in landing_lines(landing, stream).items():
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(message, dict):
            continue
        tenant, primary = message.get("tenant_id"), message.get("primary_id")
        if isinstance(tenant, str) and isinstance(primary, str) and (tenant, primary) in erased:
            found.add(key)
    return found
