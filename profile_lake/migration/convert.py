"""The commit that converts a Parquet dataset to Delta in place, written from the footers.

It is the commit CONVERT TO DELTA writes (protocol, metadata, one `add` per data file, the
files untouched), made from what the preflight already read: the plan's schema and partition
columns, and each file's size, modification time and footer row count, which goes into the
file's `numRecords` statistic. CONVERT TO DELTA would list the folder and read every footer
again in Spark jobs to infer the same schema, and without statistics (reading every data page
for them) its log has no row counts: this commit costs no Spark job and has them.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from urllib.parse import quote

from profile_lake.migration.plan import Plan
from profile_lake.migration.source import partition_of

ENGINE = "profile-lake migrate in-place"
# Spark SQL types (the plan's names) to Delta's schema types
_DELTA = {"bigint": "long", "int": "integer", "smallint": "short", "tinyint": "byte"}


def delta_type(spark_type: str) -> object:
    """A Spark SQL type of the plan as a Delta schema type (JSON)."""
    array = re.fullmatch(r"array<(.+)>", spark_type)
    if array:
        return {"type": "array", "elementType": delta_type(array.group(1)), "containsNull": True}
    return _DELTA.get(spark_type, spark_type)


def schema_string(plan: Plan) -> str:
    fields = [
        {"name": name, "type": delta_type(kind), "nullable": True, "metadata": {}}
        for name, kind in (*plan.columns, *plan.partition_columns)
    ]
    return json.dumps({"type": "struct", "fields": fields})


def _add(path: str, size: int, mtime_ns: int, rows: int) -> dict[str, object]:
    partition = {name: value for name, value in partition_of(path) or ()}
    return {
        "add": {
            "path": quote(path, safe="/="),
            "partitionValues": partition,
            "size": size,
            "modificationTime": mtime_ns // 1_000_000,
            "dataChange": True,
            "stats": json.dumps({"numRecords": rows}),
        }
    }


def conversion_actions(plan: Plan, now_ms: int, table_id: str | None = None) -> Iterator[dict]:
    """The actions of version 0: commit info, protocol, metadata, then the files in path
    order."""
    yield {
        "commitInfo": {
            "timestamp": now_ms,
            "operation": "CONVERT",
            "operationParameters": {
                "numFiles": str(len(plan.files)),
                "partitionedBy": json.dumps([name for name, _ in plan.partition_columns]),
                "collectStats": "numRecords from the Parquet footers",
                "migration": plan.migration_id,
            },
            "isBlindAppend": False,
            "engineInfo": ENGINE,
        }
    }
    yield {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}
    yield {
        "metaData": {
            "id": table_id or str(uuid.uuid4()),
            "format": {"provider": "parquet", "options": {}},
            "schemaString": schema_string(plan),
            "partitionColumns": [name for name, _ in plan.partition_columns],
            "configuration": {},
            "createdTime": now_ms,
        }
    }
    for path in sorted(plan.files):
        size, mtime_ns, rows = plan.files[path]
        yield _add(path, size, mtime_ns, rows)


def conversion_commit(plan: Plan, now_ms: int, table_id: str | None = None) -> str:
    """Version 0 of the converted table, as its log file's text (one action a line)."""
    return "".join(
        json.dumps(action) + "\n" for action in conversion_actions(plan, now_ms, table_id)
    )
