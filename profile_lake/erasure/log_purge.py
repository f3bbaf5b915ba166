"""Which files of a Delta table's `_delta_log` a purge deletes, and the marker it leaves.

After an erasure, a table's old commits still hold the erased person: a commit that deletes a
file repeats that file's column statistics, `.crc` files list live files with theirs, and
MERGE commits name their literal keys. So the purge checkpoints the table's latest version L
and deletes every log file before it. Delta's own log clean-up cannot do this at once: it
keeps `delta.logRetentionDuration` (30 days) of commits.

Deleting the history leaves change-feed readers unable to read across it. The purge marker,
a file in the table's folder (its leading `_` hides it from Delta and VACUUM), tells them
whether that loses anything: the purge commits only maintenance after the last commit that
changed rows (`data_version`), so a reader that had consumed that commit missed nothing and
reads on from L; a reader behind it lost changes and reads everything.

Pure logic: the listing, the checkpoint and the deletes are the purge's Spark step.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote

PURGE_MARKER_FILE = "_profile_lake_purge.json"
LAST_CHECKPOINT_FILE = "_last_checkpoint"
# pointers Delta keeps beside the versions, naming a version and sizes, never a value: kept
KEPT_POINTER_FILES = frozenset({LAST_CHECKPOINT_FILE, "_last_vacuum_info"})
SIDECAR_FOLDER = "_sidecars/"

# Each pattern names the first version a log file holds actions of (group 1).
_VERSIONED_FILES = (
    re.compile(r"^(\d{20})\.json$"),  # a commit
    re.compile(r"^(\d{20})\.crc$"),  # a version's checksum: its live files with their stats
    # classic (`.checkpoint.parquet`), multi-part (`.checkpoint.<part>.<parts>.parquet`) and
    # v2 (`.checkpoint.<uuid>.json` or `.parquet`) checkpoints
    re.compile(r"^(\d{20})\.checkpoint(?:\.[^/]+)?\.(?:parquet|json)$"),
    re.compile(r"^(\d{20})\.\d{20}\.compacted\.json$"),  # log compaction, from its first version
    # commits of coordinated and catalog-managed tables, before and besides their backfill
    re.compile(r"^_(?:staged_)?commits/(\d{20})\.[^/]+\.json$"),
)
_CHECKPOINT = re.compile(r"^(\d{20})\.checkpoint(?:\.(\d{10})\.(\d{10}))?(?:\.[^/]+)?\.parquet$")
_CHECKPOINT_V2_JSON = re.compile(r"^(\d{20})\.checkpoint\.[^/]+\.json$")


@dataclass(frozen=True)
class LogPurge:
    """The files of a `_delta_log` (paths relative to it) the purge deletes, and those it keeps
    without knowing what they hold, for the purge to report: a file Delta adds in a later
    version is kept until this module learns it."""

    deleted: tuple[str, ...]
    unrecognised: tuple[str, ...]


def log_files_to_purge(
    names: Iterable[str], checkpoint_version: int, sidecars_referenced: Iterable[str]
) -> LogPurge:
    """The purge of a log whose files are `names` (relative to `_delta_log`, `/`-separated),
    just checkpointed at its latest version `checkpoint_version`, whose checkpoint names the
    sidecar files `sidecars_referenced`.

    Deleted: every commit, `.crc`, checkpoint and compacted file of a version before the
    checkpoint's, and every sidecar the checkpoint does not name. Kept: the checkpoint's
    version (its commit, `.crc` and checkpoint), any later one, `_last_checkpoint`, and files
    not recognised. A ValueError when `names` holds no complete checkpoint at
    `checkpoint_version`: deleting the commits before it would leave a table nobody can read."""
    listing = sorted(set(names))
    if not has_complete_checkpoint(listing, checkpoint_version):
        raise ValueError(
            f"no complete checkpoint of version {checkpoint_version} in the log: "
            "checkpoint the table before truncating its log"
        )
    referenced = {_file_name(unquote(path)) for path in sidecars_referenced}
    deleted: list[str] = []
    unrecognised: list[str] = []
    for name in listing:
        if name in KEPT_POINTER_FILES:
            continue
        if name.startswith(SIDECAR_FOLDER) and "/" not in name.removeprefix(SIDECAR_FOLDER):
            if _file_name(name) not in referenced:
                deleted.append(name)
            continue
        version = first_version_held(name)
        if version is None:
            unrecognised.append(name)
        elif version < checkpoint_version:
            deleted.append(name)
    return LogPurge(tuple(deleted), tuple(unrecognised))


def first_version_held(name: str) -> int | None:
    """The first version whose actions the log file `name` holds; None when it is not a file
    of a version."""
    for pattern in _VERSIONED_FILES:
        match = pattern.match(name)
        if match:
            return int(match.group(1))
    return None


def has_complete_checkpoint(names: Iterable[str], version: int) -> bool:
    """Whether `names` hold a checkpoint of `version` Delta can read: a classic or v2 one, or
    every part of a multi-part one."""
    parts_found: dict[int, set[int]] = {}
    for name in names:
        if _CHECKPOINT_V2_JSON.match(name) and int(name[:20]) == version:
            return True
        match = _CHECKPOINT.match(name)
        if not match or int(match.group(1)) != version:
            continue
        if match.group(2) is None:
            return True
        parts_found.setdefault(int(match.group(3)), set()).add(int(match.group(2)))
    return any(found == set(range(1, parts + 1)) for parts, found in parts_found.items())


def _file_name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


@dataclass(frozen=True)
class PurgeMarker:
    """A purged table's marker: its log starts at `log_start` (the checkpointed version), and
    `data_version` is the last version before the purge whose commit may have changed rows
    (every commit after it, up to `log_start`, is maintenance: REORG, VACUUM)."""

    log_start: int
    data_version: int

    def __post_init__(self) -> None:
        if not 0 <= self.data_version <= self.log_start:
            raise ValueError(
                f"a purge marker's data_version ({self.data_version}) lies between 0 and its "
                f"log_start ({self.log_start})"
            )

    def to_json(self) -> str:
        return json.dumps({"log_start": self.log_start, "data_version": self.data_version})

    @classmethod
    def from_json(cls, text: str) -> PurgeMarker:
        """The marker a file holds; a ValueError when it cannot be read. A reader must not
        take an unreadable marker for no marker: it would then plan reads of purged versions."""
        try:
            data = json.loads(text)
            log_start, data_version = data["log_start"], data["data_version"]
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(f"unreadable purge marker {text!r}: {error}") from None
        if not all(type(value) is int for value in (log_start, data_version)):
            raise ValueError(f"unreadable purge marker {text!r}: versions are integers")
        return cls(log_start, data_version)


def consumed_after_purge(consumed: int, marker: PurgeMarker, latest: int) -> int | None:
    """The version a change-feed reader that consumed the table up to `consumed` counts as
    consumed, given the table's purge `marker` and its `latest` version: `consumed` itself
    when the reader is past the purge; `log_start` when it had read every change before the
    purge (what followed was maintenance, which reads as nothing); None when changes it never
    read are gone, or the marker is not this log's (it starts past the latest version)."""
    if marker.log_start > latest:
        return None
    if consumed >= marker.log_start:
        return consumed
    if consumed >= marker.data_version:
        return marker.log_start
    return None
