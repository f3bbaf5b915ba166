"""Change-feed bookmarks: per consumer of a change feed and tenant key (a tenant, or `*` for
every tenant), the version of the feed read through.

A bookmark says every change of that tenant up to the version is in the consumer, so a tenant
without changes moves on with the runs that read past it, instead of holding every later run
(and VACUUM's retention) to a start at its last change. It is written after the consumer's rows
are committed: a run killed in between leaves the older bookmark, and the next run reads those
versions again (each tenant's rows still filter what it already has). Nothing is written when
no bookmark moves, so a run with nothing new adds no version. The table is partitioned by
consumer and tenant key: runs of other tenants rewrite other partitions, which Delta's conflict
detection tells apart.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

EVERY_TENANT = "*"


def _literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def tenant_keys(tenants: list[str] | tuple[str, ...] | None) -> list[str]:
    """The bookmark keys of a run's tenants (None: every tenant, the key `*`)."""
    return [EVERY_TENANT] if tenants is None else sorted(tenants)


def ensure_bookmark_table(spark: SparkSession, table: str) -> None:
    spark.sql(f"create schema if not exists {table.split('.')[0]}")
    spark.sql(
        f"create table if not exists {table} (consumer string, tenant_key string, "
        "read_through_version bigint, bookmarked_at timestamp) using delta "
        "partitioned by (consumer, tenant_key)"
    )


def keys_behind(
    spark: SparkSession, table: str, consumer: str, keys: list[str], read_through: int
) -> list[str]:
    """The tenant keys whose bookmark (their own, or the one for every tenant) is older than
    `read_through`."""
    wanted = ", ".join(_literal(key) for key in keys)
    rows = spark.sql(
        f"""
        select wanted.tenant_key
        from (select explode(array({wanted})) as tenant_key) as wanted
        left join {table} as bookmarks
            on bookmarks.consumer = {_literal(consumer)}
            and bookmarks.tenant_key in (wanted.tenant_key, '{EVERY_TENANT}')
        group by wanted.tenant_key
        having coalesce(max(bookmarks.read_through_version), -1) < {int(read_through)}
        """
    ).collect()
    return sorted(row["tenant_key"] for row in rows)


def bookmark_read(
    spark: SparkSession,
    table: str,
    consumer: str,
    tenants: list[str] | tuple[str, ...] | None,
    read_through: int,
    rewrite: bool = False,
) -> list[str]:
    """Bookmark `read_through` for the run's tenants (every tenant: `*`), when some bookmark
    is behind it or `rewrite` (a full refresh starts the consumer over). Returns the keys
    written (none: nothing written)."""
    keys = tenant_keys(tenants)
    ensure_bookmark_table(spark, table)
    if not rewrite and not keys_behind(spark, table, consumer, keys, read_through):
        return []
    wanted = ", ".join(_literal(key) for key in keys)
    scope = "" if tenants is None else f" and tenant_key in ({wanted})"
    spark.sql(
        f"""
        insert into {table}
        replace where consumer = {_literal(consumer)}{scope}
        select
            {_literal(consumer)} as consumer,
            tenant_key,
            cast({int(read_through)} as bigint) as read_through_version,
            current_timestamp() as bookmarked_at
        from (select explode(array({wanted})) as tenant_key)
        """
    )
    return keys
