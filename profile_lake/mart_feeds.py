"""Which changes of a source table an incremental mart reads in a run.

A mart built from other tables recomputes only the keys their changes can reach. It reads
those changes from each source's change data feed, between the source version it last
consumed and the source's latest version. The consumed version is one of the mart's stamps
(``profile_lake.consumed.<schema>.<table>``), recorded by the model's post-hook after its
MERGE: if a run stops in between, the next run reads those changes again (or everything), and
a recomputation from current tables is the same whether it runs once or twice.

Where the mart's folder is on this machine, the stamps are a file in it (STAMP_FILE, hidden
from Delta's readers and VACUUM by its leading underscore) holding the mart's commit they
describe: writing it costs no Spark statement and no Delta version. They hold while only
maintenance commits follow that commit; a later commit that may change rows (a run stopped
after its MERGE, a write from elsewhere) sets them aside, and the mart reads its sources whole.
A run reads them once, before its own commits. Elsewhere (a warehouse on a cluster's storage)
they are table properties, set by one ALTER TABLE.

A read is one of:

- ``none``: nothing to read (the source has not changed, or only maintenance commits
  followed, which change no row);
- ``since``: the feed from ``start`` to ``end`` (inclusive);
- ``all``: the changes cannot be read, so the mart recomputes every key: the mart was never
  stamped (built before, or a full build), the source was replaced or restored since, its feed
  is off, or the versions to read are past Delta's retention.

A source purged after an erasure (profile_lake.erasure.log_purge) keeps no history before its
purge. Its marker says whether a mart lost changes with it: one that had consumed the last
change before the purge reads on from the purge (what came between was maintenance); one
behind it reads everything.

Pure logic: the Delta history is read by :mod:`profile_lake.spark.mart_feeds`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from profile_lake.change_feed import Commit, change_feed_readable, first_change_after
from profile_lake.erasure.log_purge import PurgeMarker, consumed_after_purge
from profile_lake.sql import sql_string

CONSUMED_PROPERTY_PREFIX = "profile_lake.consumed."
STAMP_PROPERTY_PREFIX = "profile_lake.stamp."
SESSION_CATALOG = "spark_catalog"
# the mart's stamps, in its table folder: Delta's readers and VACUUM leave `_` files alone
STAMP_FILE = "_profile_lake_stamps.json"
# operations after which the feed cannot be read across: the table was written anew
REWRITING_OPERATIONS = ("CREATE", "REPLACE", "RESTORE", "TRUNCATE")


@dataclass(frozen=True)
class FeedRead:
    """What a mart reads of one source this run; `end`: the source's latest version, which
    the mart records as consumed once it has written."""

    kind: str  # "none", "since" or "all"
    end: int
    start: int | None = None

    def as_dict(self, relation: str | None = None) -> dict[str, object]:
        """For the model: `relation` names the feed's rows (a `since` read)."""
        return {"kind": self.kind, "start": self.start, "end": self.end, "relation": relation}


def session_view_name(prefix: str, target: str, name: str) -> str:
    """A session view of the mart `target` named `name` (a source, a key set): one per pair, so
    models running side by side in one session never share one."""
    parts = (target + "__" + name).replace("`", "").replace(".", "__")
    return prefix + "__" + re.sub(r"[^A-Za-z0-9_]", "_", parts).lower()


def changes_view_name(target: str, source: str) -> str:
    """The session's temporary view of `source`'s changes read by the mart `target`."""
    return session_view_name("changes", target, source)


def table_name(relation: str) -> str:
    """A table's full name as one text however it is written: `schema.table`, lowercased,
    unquoted (a `spark_catalog.` prefix is the same table)."""
    parts = [part.strip("`").lower() for part in relation.split(".")]
    if len(parts) == 3 and parts[0] == SESSION_CATALOG:
        parts = parts[1:]
    return ".".join(parts)


def consumed_property(source: str) -> str:
    """The mart's table property holding the version of `source` it last consumed, keyed by
    the source's full name (table_name), so that two sources of one name in different schemas
    keep apart."""
    return CONSUMED_PROPERTY_PREFIX + table_name(source)


def stamp_property(name: str) -> str:
    """The mart's table property holding its stamp `name` (e.g. a digest of the definitions
    it was built from)."""
    return STAMP_PROPERTY_PREFIX + name.lower()


def consumed_version(properties: Mapping[str, str], source: str) -> int | None:
    """The version of `source` a mart with table properties `properties` last consumed."""
    value = properties.get(consumed_property(source))
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


def rewrites_table(commit: Commit) -> bool:
    return any(word in commit.operation.upper() for word in REWRITING_OPERATIONS)


def read_without_history(consumed: int | None, latest: int) -> FeedRead | None:
    """The read when the versions alone decide it: never consumed, or consumed a version the
    source no longer reaches (it was created anew), or nothing since; else None."""
    if consumed is None or consumed > latest:
        return FeedRead("all", latest)
    if consumed == latest:
        return FeedRead("none", latest)
    return None


def plan_feed_read(
    consumed: int | None,
    latest: int,
    history: Iterable[Commit],
    oldest_readable: datetime,
    feed_enabled: bool,
    purge: PurgeMarker | None = None,
) -> FeedRead:
    """The read of a source at version `latest` by a mart that consumed it up to `consumed`.
    `history`: the source's commits after `consumed` (more do no harm); `purge`: the source's
    purge marker, if it was purged."""
    if consumed is not None and purge is not None:
        consumed = consumed_after_purge(consumed, purge, latest)
    decided = read_without_history(consumed, latest)
    if decided is not None:
        return decided
    if not feed_enabled:
        return FeedRead("all", latest)
    commits = [commit for commit in history if consumed < commit.version <= latest]
    if any(rewrites_table(commit) for commit in commits):
        return FeedRead("all", latest)
    if not change_feed_readable(commits, consumed, oldest_readable):
        return FeedRead("all", latest)
    first = first_change_after(commits, consumed)
    if first is None:
        return FeedRead("none", latest)
    return FeedRead("since", latest, first.version)


def stamps_to_record(
    properties: Mapping[str, str],
    reads: Mapping[str, FeedRead],
    stamps: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The stamps a mart whose stamps are `properties` records after its run: the versions its
    `reads` consumed and its other `stamps` (name -> value), where they differ from what it
    has; {} when nothing moved, so that a run that read nothing writes nothing."""
    wanted = {
        consumed_property(source): str(read.end)
        for source, read in sorted(reads.items())
        if read.kind != "none" and read.end >= 0
    }
    wanted.update(stamps or {})
    return {key: value for key, value in sorted(wanted.items()) if properties.get(key) != value}


def record_consumed_sql(target: str, moved: Mapping[str, str]) -> str:
    """The statement setting `moved` (stamps_to_record) as table properties of the mart
    `target`, where its folder is not on this machine ('' when nothing moved)."""
    if not moved:
        return ""
    pairs = ", ".join(f"{sql_string(key)} = {sql_string(value)}" for key, value in moved.items())
    return f"alter table {target} set tblproperties ({pairs})"


def stamp_file_text(commit: str, stamps: Mapping[str, str]) -> str:
    """The stamp file of a mart just written at `commit` (profile_lake.delta_log.latest_commit,
    `<version>@<time>`)."""
    return json.dumps({"commit": commit, "stamps": dict(sorted(stamps.items()))}, indent=1)


@dataclass(frozen=True)
class StampFile:
    """A mart's stamps as its stamp file holds them, and the commit of the mart they describe."""

    commit: str
    stamps: Mapping[str, str]

    @property
    def version(self) -> int:
        return int(self.commit.split("@", 1)[0])

    @classmethod
    def parse(cls, text: str | None) -> StampFile | None:
        """None when there is no file, or it cannot be read."""
        if text is None:
            return None
        try:
            data = json.loads(text)
            found = cls(str(data["commit"]), {str(k): str(v) for k, v in data["stamps"].items()})
            found.version  # noqa: B018 (a commit that names no version is no stamp)
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
        return found

    def holds(self, commit_now: str | None, later: Iterable[Commit]) -> bool:
        """Whether the mart still has the rows the stamps describe: its log still holds the
        stamped commit as it was (`commit_now`: that version's commit as the log names it now;
        a table created anew restarts its versions), and every commit after it (`later`) is
        maintenance, which changes no row (OPTIMIZE, VACUUM, table properties)."""
        return commit_now == self.commit and first_change_after(later, self.version) is None


def stamps_in_force(
    properties: Mapping[str, str], stamp_file: StampFile | None, holds: bool
) -> dict[str, str]:
    """A mart's stamps: its table properties, overridden by its stamp file's where that file
    still `holds` (StampFile.holds); a file that does not is set aside, and a table property
    stamp is at worst older than the file's, which makes the run read more, never less."""
    found = dict(properties)
    if stamp_file is not None and holds:
        found.update(stamp_file.stamps)
    return found
