"""Table names of a Python model's refs, for reads that need a name rather than a DataFrame."""

from __future__ import annotations

from typing import Any


def ref_table_name(dbt: Any, model_name: str) -> str:
    """The table `dbt.ref(model_name)` reads, as dbt resolved it for this model (schema and
    alias included). Reads by name (DESCRIBE HISTORY, change feeds, pinned versions) go
    through it so that they follow the ref; the model still calls `dbt.ref(model_name)` itself,
    which is what gives dbt the lineage."""
    resolve_names = type(dbt)(lambda table_name: table_name)
    return str(resolve_names.ref(model_name))
