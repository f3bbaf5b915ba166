"""The erasure's Spark side: `erasure_salts` in `<schema>_control` (never dropped by dbt, so a
salt survives a full refresh), and clearing the text of staged request lines."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable
from typing import TypeVar

from pyspark.sql import SparkSession

from profile_lake.erasure.salts import salts_for, tenants_needing_salts
from profile_lake.sql import sql_string

T = TypeVar("T")

SALTS_TABLE = "erasure_salts"
SALTS_COLUMNS = "tenant_id string not null, salt binary not null, created_at timestamp not null"
# stats on the tenant only: statistics of a binary salt say nothing a reader needs
SALTS_PROPERTIES = "'delta.dataSkippingStatsColumns' = 'tenant_id'"


def salts_table(control_schema: str) -> str:
    return f"{control_schema}.{SALTS_TABLE}"


def ensure_salts_table(spark: SparkSession, control_schema: str) -> None:
    """Create `erasure_salts` when it is missing (a catalog look-up, no statement, otherwise:
    every run asks, idle ones included)."""
    table = salts_table(control_schema)
    if spark.catalog.tableExists(table):
        return
    spark.sql(f"create schema if not exists {control_schema}")
    spark.sql(
        f"create table if not exists {table} ({SALTS_COLUMNS}) using delta "
        f"comment 'One salt per tenant for the erasure hashes' "
        f"tblproperties ({SALTS_PROPERTIES})"
    )


def draw_erasure_salts(
    spark: SparkSession, control_schema: str, requesting: Iterable[str | None]
) -> list[str]:
    """Draw a salt for every tenant of `requesting` (the tenants of a batch's `erasures` lines,
    before the batch is appended) that has none; returns those tenants. Insert-if-absent,
    retried on a conflict: a tenant's salt is never replaced."""
    table = salts_table(control_schema)
    salted = [row["tenant_id"] for row in spark.sql(f"select tenant_id from {table}").collect()]
    missing = tenants_needing_salts(requesting, salted)
    if not missing:
        return []
    values = ", ".join(
        f"({sql_string(tenant)}, X'{salt.hex()}')" for tenant, salt in salts_for(missing).items()
    )
    statement = (
        f"merge into {table} as salts "
        f"using (select * from values {values} as drawn(tenant_id, salt)) as drawn "
        "on salts.tenant_id = drawn.tenant_id "
        "when not matched then insert (tenant_id, salt, created_at) "
        "values (drawn.tenant_id, drawn.salt, current_timestamp())"
    )
    retry_on_conflict(lambda: spark.sql(statement))
    return missing


def clear_staged_request_lines(spark: SparkSession, landing_table: str, staged_table: str) -> int:
    """Clear the text of every line of the `erasures` landing table that `staged_table`
    (stg_erasures__requests) has staged: lines of a tenant's batches up to the newest batch it
    holds for that tenant (its watermark). Returns the number of lines cleared; with no line to
    clear it commits nothing (a commit would make the table look changed to its readers)."""
    if not spark.sql(f"select 1 from {landing_table} where line is not null limit 1").take(1):
        return 0
    statement = (
        f"merge into {landing_table} as landed "
        f"using (select staged_tenant_id, max(ingest_batch_id) as staged_through "
        f"from {staged_table} group by staged_tenant_id) as staged "
        "on landed.tenant_id = staged.staged_tenant_id "
        "and landed.ingest_batch_id <= staged.staged_through "
        "and landed.line is not null "
        "when matched then update set line = null"
    )
    metrics = retry_on_conflict(lambda: spark.sql(statement).collect())
    return int(metrics[0]["num_updated_rows"]) if metrics else 0


def retry_on_conflict(write: Callable[[], T], attempts: int = 5) -> T:
    """Run a Delta write again when another process committed a conflicting one first (an
    ingest appending, another run drawing a salt)."""
    for attempt in range(attempts):
        try:
            return write()
        except Exception as error:
            if "Concurrent" not in str(error) or attempt == attempts - 1:
                raise
            time.sleep(random.uniform(0.2, 1.0))
    raise AssertionError("unreachable")
