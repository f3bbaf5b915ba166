"""The erased set applied to staged lines (profile_lake.erasure.filtering's rules): every
reader of staged lines reads them through it, so a line naming an erased identity has the same
effect whether it landed before or after the request, and a full refresh gives the same
tables (SPEC.md section 7)."""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from profile_lake.erasure.filtering import (
    erased_sets_sql,
    identity_erased_sql,
    line_erased_sql,
    related_ids_kept_sql,
    touches_erased_sql,
)
from profile_lake.spark.erasure import salts_table

ERASED_SET = "erased_set"


def erased_set_table(control_schema: str) -> str:
    return f"{control_schema}.{ERASED_SET}"


def erased_by_tenant(
    spark: SparkSession, control_schema: str, tenants: Iterable[str] | None = None
) -> DataFrame | None:
    """One row per tenant with something erased: its salt and the hashes (ERASED_COLUMNS);
    None when nothing is erased anywhere (or no request was ever applied)."""
    table = erased_set_table(control_schema)
    if not spark.catalog.tableExists(table):
        return None
    erased = spark.sql(erased_sets_sql(table, salts_table(control_schema)))
    if tenants is not None:
        erased = erased.where(F.col("tenant_id").isin(*tenants))
    # a few rows: read once, so that every use of them in the run's plans costs no job
    found = erased.collect()
    return spark.createDataFrame(found, erased.schema) if found else None


def with_erased_set(lines: DataFrame, erased: DataFrame) -> DataFrame:
    """`lines` with their tenant's erased set columns (null for a tenant with none); the
    erased set is one row per tenant, broadcast."""
    return lines.join(F.broadcast(erased), "tenant_id", "left")


def without_erased_lines(changes: DataFrame, erased: DataFrame | None) -> DataFrame:
    """Record changes without the lines the erased set removes, and with erased identities
    removed from the others' related_ids."""
    if erased is None:
        return changes
    columns = changes.columns
    return (
        with_erased_set(changes, erased)
        .where(~F.expr(line_erased_sql()))
        .withColumn("related_ids", F.expr(related_ids_kept_sql()))
        .select(*columns)
    )


def touching_erased(changes: DataFrame, erased: DataFrame) -> DataFrame:
    """The record changes an erasure changes: removed, or with an erased related identity."""
    return (
        with_erased_set(changes, erased)
        .where(F.expr(touches_erased_sql()))
        .select(*changes.columns)
    )


def without_erased_renames(renames: DataFrame, erased: DataFrame | None) -> DataFrame:
    """Rename lines without those whose from_id or to_id is erased."""
    if erased is None:
        return renames
    return (
        with_erased_set(renames, erased)
        .where(~F.expr(identity_erased_sql("from_id", "to_id")))
        .select(*renames.columns)
    )
