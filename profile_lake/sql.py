"""Spark SQL text built from Python values."""

from __future__ import annotations


def sql_string(text: str) -> str:
    """A Spark SQL string literal of `text` (backslashes and single quotes escaped)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
