"""How `make test` shares the test modules between pytest-xdist's workers, with xdist's own
`--dist loadgroup` (tests of one `xdist_group` run on one worker) and `--no-loadscope-reorder`
(the groups are handed out in collection order).

- A module is a group: its tests share its module-scoped lakes, so it runs whole on one worker.
- The modules of a shared folder are one group: they read one session-wide lake (the sample
  lake), which a worker then builds once per test session rather than once per worker.
- The groups that start Spark go first, the largest first, and the quick pure-logic ones last:
  they fill the end of the run instead of leaving a worker idle behind a long module. Groups
  known to take longest (`first`, measured, longest first) go before every other, in that
  order: handed out late, one of them would set the run's end while the other worker has
  nothing left.

pytest-xdist 3.8 loses the groups on pytest 9.2, scheduling every test alone
(pytest-dev/pytest-xdist#1386), so pyproject.toml keeps pytest below 9.2, and
pytests/unit/test_xdist_groups.py fails should an upgrade lose them again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pytest


def xdist_group(nodeid: str, shared_folders: Sequence[str]) -> str:
    """A test's group: its shared folder if it has one, else its module."""
    module = nodeid.split("::", 1)[0]
    return next((folder for folder in shared_folders if module.startswith(folder)), module)


def group_and_order(
    config: pytest.Config,
    items: list[pytest.Item],
    shared_folders: Sequence[str],
    last_folders: Sequence[str],
    first: Sequence[str] = (),
) -> None:
    """Mark each test with its xdist group, and order the groups: those outside `last_folders`
    first, the groups named in `first` before the rest of them in their order, then the
    largest first (a stable sort: a module's tests keep their order)."""
    groups = {item.nodeid: xdist_group(item.nodeid, shared_folders) for item in items}
    sizes = Counter(groups.values())

    def rank(item: pytest.Item) -> tuple[bool, int, int]:
        group = groups[item.nodeid]
        measured = first.index(group) if group in first else len(first)
        return group.startswith(tuple(last_folders)), measured, -sizes[group]

    items.sort(key=rank)
    if config.pluginmanager.hasplugin("xdist"):  # the mark is xdist's
        for item in items:
            item.add_marker(pytest.mark.xdist_group(groups[item.nodeid]))
