"""Landing files for tests: one JSON-lines part per stream."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path


def write_landing(landing: Path, part: Mapping[str, Sequence[dict]], name: str) -> None:
    """Write `part` (stream -> messages) as `<landing>/<stream>/<name>.jsonl`, one message per
    line; a stream with no message gets no file."""
    for stream, messages in part.items():
        folder = landing / stream
        folder.mkdir(parents=True, exist_ok=True)
        if messages:
            lines = "".join(json.dumps(message) + "\n" for message in messages)
            (folder / f"{name}.jsonl").write_text(lines)
