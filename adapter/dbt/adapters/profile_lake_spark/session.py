"""dbt-spark's session connection, with seed values rendered as correct Spark SQL literals.

The session method has no driver to bind parameters: dbt-spark's `SessionConnectionWrapper`
formats each seed value into the SQL text itself, as `'<value>'` with no escaping
(dbt-labs/dbt-spark#901: an empty CSV cell becomes the string 'None', not NULL; a value with a
quote, e.g. `'69.135.206.194'` in dbt's own Python model test seed, breaks the INSERT) and
numbers go through float (large integers and decimals lose digits). This wrapper renders each
value as the literal it is.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import Any

from dbt.adapters.spark.session import SessionConnectionWrapper


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


class ProfileLakeSessionConnectionWrapper(SessionConnectionWrapper):
    @classmethod
    def _fix_binding(cls, value: Any) -> str:  # type: ignore[override]
        return spark_literal(value)
