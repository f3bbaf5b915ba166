"""The manifest: the options, what each file holds, and every bad line with its error codes."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from profile_lake.generator.writer import BadEntry, FileStats

FORMAT = "profile-lake-landing-manifest/1"


def _totals(files: list[FileStats]) -> dict[str, int]:
    return {
        "lines": sum(stats.lines for stats in files),
        "good": sum(stats.good for stats in files),
        "bad": sum(stats.bad for stats in files),
        "duplicates": sum(stats.duplicates for stats in files),
    }


def _file_entry(stats: FileStats) -> dict[str, Any]:
    return {
        "file": stats.file,
        "lines": stats.lines,
        "good": stats.good,
        "bad": stats.bad,
        "duplicates": stats.duplicates,
        "bytes": stats.bytes,
    }


def _bad_entry(entry: BadEntry) -> dict[str, Any]:
    return {
        "stream": entry.stream,
        "file": entry.file,
        "line": entry.line,
        "stage": entry.bad.stage,
        "error_codes": list(entry.bad.codes),
        "tenant_id": entry.bad.tenant_id,
        "recipe": entry.bad.recipe,
    }


def build_manifest(
    options: dict[str, Any],
    first_part: int,
    files: dict[str, list[FileStats]],
    bad: list[BadEntry],
) -> dict[str, Any]:
    """The manifest of one generator run (one batch)."""
    streams = {
        stream: {**_totals(stream_files), "files": [_file_entry(f) for f in stream_files]}
        for stream, stream_files in files.items()
    }
    every_file = [stats for stream_files in files.values() for stats in stream_files]
    codes = Counter(code for entry in bad for code in entry.bad.codes)
    return {
        "format": FORMAT,
        "options": options,
        "first_part": first_part,
        "totals": {"files": len(every_file), **_totals(every_file)},
        "streams": streams,
        "error_code_counts": dict(sorted(codes.items())),
        "bad_lines": [_bad_entry(entry) for entry in bad],
    }


def dump_manifest(manifest: dict[str, Any]) -> str:
    """Indented JSON, with one bad line per text line so large manifests stay readable."""
    head = {key: value for key, value in manifest.items() if key != "bad_lines"}
    text = json.dumps(head, indent=2, ensure_ascii=False)[: -len("\n}")]
    entries = [json.dumps(entry, ensure_ascii=False) for entry in manifest["bad_lines"]]
    if not entries:
        return text + ',\n  "bad_lines": []\n}\n'
    return text + ',\n  "bad_lines": [\n    ' + ",\n    ".join(entries) + "\n  ]\n}\n"


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_manifest(manifest), encoding="utf-8")
