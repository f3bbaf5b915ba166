"""The erasure's control tables in `<schema>_control` (never dropped by dbt, so they survive a
full refresh). Step 2 of the erasure keeps one: `erasure_salts`, a salt per tenant."""

from __future__ import annotations

import random
import time

from pyspark.sql import SparkSession

from profile_lake.erasure.salts import salts_for, tenants_needing_salts
from profile_lake.sql import sql_string

SALTS_TABLE = "erasure_salts"
SALTS_COLUMNS = "tenant_id string not null, salt binary not null, created_at timestamp not null"
# stats on the tenant only: statistics of a binary salt say nothing a reader needs
SALTS_PROPERTIES = "'delta.dataSkippingStatsColumns' = 'tenant_id'"


def salts_table(control_schema: str) -> str:
    return f"{control_schema}.{SALTS_TABLE}"


def ensure_erasure_salts(spark: SparkSession, control_schema: str, landing_table: str) -> list[str]:
    """Create `erasure_salts` if missing and draw a salt for every tenant named by a staged
    line of `landing_table` (the `erasures` landing table) that has none; returns those
    tenants. Insert-if-absent, retried on a conflict: a tenant's salt is never replaced."""
    table = salts_table(control_schema)
    spark.sql(f"create schema if not exists {control_schema}")
    spark.sql(
        f"create table if not exists {table} ({SALTS_COLUMNS}) using delta "
        f"comment 'One salt per tenant for the erasure hashes' "
        f"tblproperties ({SALTS_PROPERTIES})"
    )
    requesting = [
        row["tenant_id"]
        for row in spark.sql(f"select distinct tenant_id from {landing_table}").collect()
    ]
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
    for attempt in range(5):
        try:
            spark.sql(statement)
            return missing
        except Exception as error:  # another process drew a salt at the same time
            if "Concurrent" not in str(error) or attempt == 4:
                raise
            time.sleep(random.uniform(0.2, 1.0))
    return missing
