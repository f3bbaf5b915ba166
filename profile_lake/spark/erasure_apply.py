"""Applying erasure requests, first step: fix each new request's subject and keep it as hashes.

Control tables in `<schema>_control` (not dbt's, so a full refresh keeps them):
- `erased_set`: one row per hash of an erased identity or record_id, per tenant and request;
- `erasure_events`: one row per request line handled: `fixed` when its subject was fixed,
  `repeated` when its request_id was handled before (SPEC.md section 7: a repeated request
  changes nothing).

Reads of one person's rows name her identities in the query text (they never reach a Delta
commit); writes carry hashes only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from pyspark.sql import Row, SparkSession
from pyspark.sql import functions as F

from profile_lake.erasure.filtering import (
    erased_sets_sql,
    identity_erased_sql,
    touches_erased_sql,
)
from profile_lake.erasure.hashing import erasure_hash_sql
from profile_lake.erasure.subject import PersonRows, Subject, fix_subject
from profile_lake.spark.erasure import retry_on_conflict, salts_table
from profile_lake.spark.purge import ensure_purge_events
from profile_lake.sql import sql_string

ERASED_SET_COLUMNS = (
    "tenant_id string not null, request_id string not null, kind string not null, "
    "hash string not null, fixed_at timestamp not null"
)
EVENTS_COLUMNS = (
    "tenant_id string not null, request_id string not null, event string not null, "
    "source_file string not null, line_number bigint not null, ingest_batch_id bigint not null, "
    "requested_ts timestamp, identities_erased bigint, records_erased bigint, "
    "landing_files array<string>, at timestamp not null"
)


@dataclass(frozen=True)
class LakeTables:
    """The tables a request's subject is read from, and the control schema it is kept in."""

    requests: str  # stg_erasures__requests
    identity_map: str
    profile_identities: str
    record_states: str  # int_record_states
    control_schema: str
    # tables keyed by identity, with the columns whose erased identity removes a row
    # (identity_map, int_identities_renamed, entity_names, its snapshot); missing ones skipped
    identity_rows: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def erased_set(self) -> str:
        return f"{self.control_schema}.erased_set"

    @property
    def events(self) -> str:
        return f"{self.control_schema}.erasure_events"


def ensure_control_tables(spark: SparkSession, tables: LakeTables) -> None:
    """The events and purges tables. `erased_set` is created with its first rows: while it is
    missing, the models reading lines through it skip the erasure's rules altogether
    (a catalog look-up, no Spark job)."""
    spark.sql(f"create schema if not exists {tables.control_schema}")
    ensure_purge_events(spark, tables.control_schema)
    create_control_table(
        spark, tables.events, EVENTS_COLUMNS, "tenant_id,request_id,event,ingest_batch_id"
    )


def create_control_table(spark: SparkSession, table: str, columns: str, stats: str) -> None:
    if spark.catalog.tableExists(table):
        return
    spark.sql(
        f"create table if not exists {table} ({columns}) using delta "
        f"tblproperties ('delta.dataSkippingStatsColumns' = '{stats}')"
    )


def new_requests(
    spark: SparkSession, tables: LakeTables, tenants: Iterable[str] | None
) -> list[Row]:
    """Accepted request lines no event covers yet, oldest first (by batch, file, line)."""
    scope = (
        ""
        if tenants is None
        else ("and requests.tenant_id in (" + ", ".join(sql_string(t) for t in tenants) + ")")
    )
    return spark.sql(
        f"""
        select requests.tenant_id, requests.request_id, requests.identity_hash,
               requests.source_file, requests.line_number, requests.ingest_batch_id,
               requests.requested_ts
        from {tables.requests} as requests
        left anti join {tables.events} as events
            on requests.tenant_id = events.tenant_id
            and requests.source_file = events.source_file
            and requests.line_number = events.line_number
        where requests.is_accepted {scope}
        order by requests.ingest_batch_id, requests.source_file, requests.line_number
        """
    ).collect()


def handled_request_ids(spark: SparkSession, tables: LakeTables) -> set[tuple[str, str]]:
    rows = spark.sql(f"select distinct tenant_id, request_id from {tables.events}").collect()
    return {(row["tenant_id"], row["request_id"]) for row in rows}


def _in_list(values: Iterable[str]) -> str:
    return ", ".join(sql_string(value) for value in sorted(values)) or "null"


def person_rows(
    spark: SparkSession, tables: LakeTables, tenant: str, identity_hash: str
) -> PersonRows:
    """One person's rows as the run finds them (PersonRows), from the request's hash; a lake
    whose identity tables are not built yet has seen no one."""
    if not spark.catalog.tableExists(tables.identity_map):
        return PersonRows(None)
    tenant_sql = sql_string(tenant)
    salts = salts_table(tables.control_schema)
    salt = f"(select salt from {salts} where tenant_id = {tenant_sql})"
    found = spark.sql(
        f"select identity_id, canonical_id from {tables.identity_map} "
        f"where tenant_id = {tenant_sql} "
        f"and {erasure_hash_sql('identity_id', 'identity', salt)} = {sql_string(identity_hash)}"
    ).take(1)
    if not found:
        return PersonRows(None)
    named, canonical = found[0]["identity_id"], found[0]["canonical_id"]
    profile = (
        []
        if not spark.catalog.tableExists(tables.profile_identities)
        else spark.sql(
            f"select identity_id from {tables.profile_identities} where tenant_id = {tenant_sql} "
            f"and profile_id in (select profile_id from {tables.profile_identities} "
            f"where tenant_id = {tenant_sql} and identity_id = {sql_string(canonical)})"
        ).collect()
    )
    canonicals = frozenset(row["identity_id"] for row in profile) | {canonical}
    mapped = spark.sql(
        f"select identity_id, canonical_id from {tables.identity_map} "
        f"where tenant_id = {tenant_sql} and canonical_id in ({_in_list(canonicals)})"
    ).collect()
    identities = canonicals | {row["identity_id"] for row in mapped} | {named}
    records = (
        []
        if not spark.catalog.tableExists(tables.record_states)
        else (
            spark.table(tables.record_states)
            .where((F.col("tenant_id") == tenant) & F.col("primary_id").isin(*sorted(identities)))
            .select("record_id", "primary_id")
            .distinct()
            .collect()
        )
    )
    return PersonRows(
        named,
        canonical,
        canonicals,
        tuple((row["identity_id"], row["canonical_id"]) for row in mapped),
        tuple((row["record_id"], row["primary_id"]) for row in records),
    )


@dataclass(frozen=True)
class Fixed:
    request: Row
    subject: Subject | None  # None: a repeated request_id


def fix_new_requests(
    spark: SparkSession, tables: LakeTables, tenants: Iterable[str] | None
) -> list[Fixed]:
    """Fix the subject of every new request and record it (erased_set, erasure_events) in one
    commit per table; returns what it fixed."""
    ensure_control_tables(spark, tables)
    handled = handled_request_ids(spark, tables)
    fixed: list[Fixed] = []
    for request in new_requests(spark, tables, tenants):
        key = (request["tenant_id"], request["request_id"])
        if key in handled:
            fixed.append(Fixed(request, None))
            continue
        handled.add(key)
        rows = person_rows(spark, tables, request["tenant_id"], request["identity_hash"])
        fixed.append(Fixed(request, fix_subject(request["identity_hash"], rows)))
    if fixed:
        record_fixed(spark, tables, fixed, datetime.now(UTC))
        erasing = sorted({item.request["tenant_id"] for item in fixed if item.subject})
        delete_erased_rows(spark, tables, erasing)
    return fixed


ERASED_SETS_VIEW = "profile_lake_erased_sets"


def delete_erased_rows(spark: SparkSession, tables: LakeTables, tenants: list[str]) -> None:
    """Delete the rows of erased identities from the tables keyed by identity. Their models
    read new lines through the erased set, so no later run adds them back; the identity
    graph reads identity_map's deletes from its change feed. Matched by hash in a MERGE whose
    condition names no identity; a table with no such row gets no commit."""
    if not tenants or not spark.catalog.tableExists(tables.erased_set):
        return
    spark.sql(erased_sets_sql(tables.erased_set, salts_table(tables.control_schema))).where(
        F.col("tenant_id").isin(*tenants)
    ).createOrReplaceTempView(ERASED_SETS_VIEW)
    for table, columns in tables.identity_rows:
        if not spark.catalog.tableExists(table):
            continue
        condition = "target.tenant_id = erased.tenant_id and " + identity_erased_sql(
            *(f"target.{column}" for column in columns)
        )
        found = spark.sql(
            f"select 1 from {table} as target inner join {ERASED_SETS_VIEW} as erased "
            f"on {condition} limit 1"
        ).take(1)
        if found:
            retry_on_conflict(
                lambda table=table, condition=condition: spark.sql(
                    f"merge into {table} as target using {ERASED_SETS_VIEW} as erased "
                    f"on {condition} when matched then delete"
                )
            )


def record_fixed(
    spark: SparkSession, tables: LakeTables, fixed: list[Fixed], now: datetime
) -> None:
    """Append the hashes and the events. The hashes are computed in Spark from a temporary
    view of the values, so no commit names an identity."""
    values = [
        (item.request["tenant_id"], item.request["request_id"], kind, value)
        for item in fixed
        if item.subject is not None
        for kind, values in (
            ("identity", item.subject.identities),
            ("record", item.subject.record_ids),
        )
        for value in values
    ]
    own = [
        (item.request["tenant_id"], item.request["request_id"], item.subject.identity_hash)
        for item in fixed
        if item.subject is not None
    ]
    moment = F.lit(now).cast("timestamp")
    if values or own:
        salts = spark.table(salts_table(tables.control_schema)).select("tenant_id", "salt")
        plain = spark.createDataFrame(
            values, "tenant_id string, request_id string, kind string, value string"
        )
        hashed = plain.join(salts, "tenant_id").select(
            "tenant_id",
            "request_id",
            "kind",
            F.when(
                F.col("kind") == "identity",
                F.expr(erasure_hash_sql("value", "identity", "salt")),
            )
            .otherwise(F.expr(erasure_hash_sql("value", "record", "salt")))
            .alias("hash"),
        )
        named = spark.createDataFrame(own, "tenant_id string, request_id string, hash string")
        rows = (
            hashed.unionByName(named.withColumn("kind", F.lit("identity")))
            .distinct()
            .withColumn("fixed_at", moment)
        )
        create_control_table(
            spark, tables.erased_set, ERASED_SET_COLUMNS, "tenant_id,request_id,kind"
        )
        retry_on_conflict(
            lambda: rows.write.format("delta").mode("append").saveAsTable(tables.erased_set)
        )
    files = landing_files_holding(
        spark, tables, [(item.request["tenant_id"], item.request["request_id"]) for item in fixed]
    )
    events = spark.createDataFrame(
        [
            (
                item.request["tenant_id"],
                item.request["request_id"],
                "repeated" if item.subject is None else "fixed",
                item.request["source_file"],
                item.request["line_number"],
                item.request["ingest_batch_id"],
                item.request["requested_ts"],
                None if item.subject is None else len(item.subject.identities),
                None if item.subject is None else len(item.subject.record_ids),
                None
                if item.subject is None
                else sorted(
                    files.get((item.request["tenant_id"], item.request["request_id"]), set())
                    | {item.request["source_file"]}
                ),
            )
            for item in fixed
        ],
        "tenant_id string, request_id string, event string, source_file string, "
        "line_number bigint, ingest_batch_id bigint, requested_ts timestamp, "
        "identities_erased bigint, records_erased bigint, landing_files array<string>",
    ).withColumn("at", moment)
    retry_on_conflict(
        lambda: events.write.format("delta").mode("append").saveAsTable(tables.events)
    )


# the staged lines of each stream, and the rule saying a line names the erased set
STAGED_LINES = (
    ("stg_records__changes", touches_erased_sql()),
    ("stg_id_mutations__renames", identity_erased_sql("from_id", "to_id")),
    ("stg_entity_names__updates", identity_erased_sql("id")),
)


def landing_files_holding(
    spark: SparkSession, tables: LakeTables, requests: list[tuple[str, str]]
) -> dict[tuple[str, str], set[str]]:
    """The landing files with a staged line naming each request's subject, per (tenant_id,
    request_id): the producers' files, which the lake never changes (an operator removes
    them). Found by hashing the staged lines of the requests' tenants."""
    if not requests or not spark.catalog.tableExists(tables.erased_set):
        return {}
    staging_schema = tables.requests.rsplit(".", 1)[0]
    tenants = sorted({tenant for tenant, _ in requests})
    sets = (
        spark.sql(erased_sets_sql(tables.erased_set, salts_table(tables.control_schema), True))
        .where(F.col("tenant_id").isin(*tenants))
        .where(F.col("request_id").isin(*sorted({request for _, request in requests})))
    )
    found: dict[tuple[str, str], set[str]] = {}
    for model, names_subject in STAGED_LINES:
        table = f"{staging_schema}.{model}"
        if not spark.catalog.tableExists(table):
            continue
        lines = spark.table(table).where(F.col("tenant_id").isin(*tenants))
        holding = (
            lines.join(F.broadcast(sets), "tenant_id")
            .where(F.expr(names_subject))
            .select("tenant_id", "request_id", "source_file")
            .distinct()
            .collect()
        )
        for row in holding:
            found.setdefault((row["tenant_id"], row["request_id"]), set()).add(row["source_file"])
    return found
