"""dbt-spark's session connection, with seed values rendered as correct Spark SQL literals.

The session method has no driver to bind parameters: dbt-spark's `SessionConnectionWrapper`
formats each seed value into the SQL text itself, as `'<value>'` with no escaping
(dbt-labs/dbt-spark#901: an empty CSV cell becomes the string 'None', not NULL; a value with a
quote, e.g. `'69.135.206.194'` in dbt's own Python model test seed, breaks the INSERT) and
numbers go through float (large integers and decimals lose digits). This wrapper renders each
value as the literal it is.

Each statement also names its dbt node as the Spark job description (`dbt: <node id>`, from
dbt's query comment), so Spark's UI, event log and SQL status store tell which model, test or
hook ran each query.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from decimal import Decimal
from typing import Any

from dbt.adapters.spark.session import SessionConnectionWrapper

# dbt's query comment, which it puts before each statement: `/* {"app": "dbt", ...} */`
QUERY_COMMENT = re.compile(r"\A\s*/\*\s*(\{.*?\})\s*\*/", re.DOTALL)


def spark_literal(value: Any) -> str:
    """A Spark SQL literal for a seed value (dbt inserts it as `cast(<literal> as <type>)`).

    Strings follow Spark's default parser rules (spark.sql.parser.escapedStringLiterals=false):
    backslash and single quote are escaped with a backslash."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"'{value}'"
    if isinstance(value, Decimal):
        # NaN / Infinity as strings: Spark casts those to double
        return format(value, "f") if value.is_finite() else f"'{value}'"
    if isinstance(value, dt.datetime):
        return f"'{value.strftime('%Y-%m-%d %H:%M:%S.%f')[:-3]}'"
    if isinstance(value, dt.date):
        return f"'{value.isoformat()}'"
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{text}'"


def dbt_node_id(sql: str) -> str | None:
    """The `node_id` of the dbt query comment that starts `sql`; None without one, or for a
    statement outside any node (its comment names the connection instead)."""
    comment = QUERY_COMMENT.match(sql)
    if comment is None:
        return None
    try:
        fields = json.loads(comment.group(1))
    except json.JSONDecodeError:
        return None
    node_id = fields.get("node_id") if isinstance(fields, dict) else None
    return node_id if isinstance(node_id, str) and node_id else None


def describe_spark_jobs(node_id: str | None) -> None:
    """Name the Spark jobs and SQL executions this thread starts next after the dbt node (its
    Spark job description, a thread-local property: PySpark pins each Python thread to a JVM
    thread), or clear the name for a statement of no node. An operator reading Spark's UI or
    event log then sees which model each query ran for."""
    from pyspark import SparkContext

    # The process's context, if any: getOrCreate() here would start a session without the
    # profile's settings. dbt's first statement creates it, and goes unnamed.
    context = SparkContext._active_spark_context
    if context is not None:
        # None removes the property (py4j passes null)
        context.setJobDescription(f"dbt: {node_id}" if node_id else None)  # type: ignore[arg-type]


class ProfileLakeSessionConnectionWrapper(SessionConnectionWrapper):
    def execute(self, sql: str, bindings: list[Any] | None = None) -> None:
        describe_spark_jobs(dbt_node_id(sql))
        super().execute(sql, bindings)

    @classmethod
    def _fix_binding(cls, value: Any) -> str:  # type: ignore[override]
        return spark_literal(value)
