"""This machine's processes, as the lock rules need them."""

from __future__ import annotations

import os
from pathlib import Path


def process_started(pid: int) -> str:
    """The process's start time (clock ticks since boot, from /proc), '' where unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    # the command name (field 2) is in parentheses and may hold spaces
    fields = stat.rsplit(")", 1)[1].split()
    return fields[19]  # field 22 of the whole line: starttime


def process_alive(pid: int, started: str) -> bool:
    """Whether `pid` still runs and is the same process (not a reused pid)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, owned by someone else
    current = process_started(pid)
    return not started or not current or current == started
