"""The staged lines an erasure removes or changes, rewritten in place (SPEC.md section 7).

Every reader of staged lines reads them through the erased set (profile_lake.erasure.filtering),
so the tables it builds are right whatever the staged rows hold. This step makes the staged rows
themselves hold nothing of the person, at the end of the run that applies a request and of every
run after it that stages a line naming the person:

- a removed line (its record_id, primary_id, from_id, to_id or name id erased) becomes an erased
  row: in its landing table the text is cleared and `is_erased` set; in its staging table every
  column but the line's place (tenant, batch, file, line number, time) is cleared and
  `is_erased` set; its `ingest_errors` rows are deleted. The rows stay, so every landed line is
  still counted (landed = accepted + quarantined + erased) and every watermark holds;
- a line relating to an erased identity keeps every other byte: its related_ids lose the erased
  ones in staging, in its landing text (profile_lake.erasure.landed_text) and, when it was
  quarantined, in the text `ingest_errors` and staging keep.

A full refresh of staging stages the landing tables' rows as they now are: an erased row stages
as erased, a rewritten line as the line without the erased ids.

Each table is written by one MERGE whose condition names no value (the rows to change come from
a temporary view); the landing table first and staging last, so a run killed between them finds
the staged rows again and repeats the writes, which change nothing twice. Which batches were
looked at is kept per tenant and stream in `<schema>_control.erasure_rewrites`: a run looks at
the lines staged since, or at every line of a tenant whose erased set grew.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from profile_lake.erasure.filtering import (
    erased_sets_sql,
    identity_erased_sql,
    line_erased_sql,
    related_ids_kept_sql,
)
from profile_lake.erasure.landed_text import without_erased_related
from profile_lake.run_state import NEUTRAL_COMMIT_TAG
from profile_lake.spark.erasure import retry_on_conflict, salts_table
from profile_lake.spark.erasure_apply import create_control_table
from profile_lake.spark.erasure_filter import erased_set_table

REWRITES_COLUMNS = (
    "tenant_id string not null, stream string not null, through_batch_id bigint not null, "
    "erased_hashes bigint not null, at timestamp not null"
)
REMOVALS_SCHEMA = (
    "tenant_id string, request_id string, table_name string, rows_removed bigint, "
    "rows_rewritten bigint"
)
# the columns of a staged row that say where and when the line landed: all an erased row keeps
STAGED_PLACE = frozenset(
    {
        "ingest_batch_id",
        "tenant_id",
        "staged_tenant_id",
        "source_file",
        "line_number",
        "ingested_at",
    }
)
FIX_VIEW = "profile_lake_erasure_fixes"
# Delta's per-session setting of a commit's userMetadata
USER_METADATA_CONF = "spark.databricks.delta.commitInfo.userMetadata"


@dataclass(frozen=True)
class StagedStream:
    """A landing stream's tables and the rule saying which of its lines an erasure removes."""

    stream: str
    landing: str  # the ingest's landing table
    staging: str  # its staging model's table
    removed_sql: str  # true for a line the erased set removes (filtering's rules)
    has_related: bool  # whether its lines carry related_ids


def staged_streams(landing_schema: str, staging_schema: str) -> tuple[StagedStream, ...]:
    return (
        StagedStream(
            "records",
            f"{landing_schema}.records",
            f"{staging_schema}.stg_records__changes",
            line_erased_sql(),
            True,
        ),
        StagedStream(
            "id_mutations",
            f"{landing_schema}.id_mutations",
            f"{staging_schema}.stg_id_mutations__renames",
            identity_erased_sql("from_id", "to_id"),
            False,
        ),
        StagedStream(
            "entity_names",
            f"{landing_schema}.entity_names",
            f"{staging_schema}.stg_entity_names__updates",
            identity_erased_sql("id"),
            False,
        ),
    )


@dataclass(frozen=True)
class TouchedLine:
    """A staged line an erasure changes, with the requests whose erased set reach it."""

    tenant_id: str
    staged_tenant_id: str
    source_file: str
    line_number: int
    ingest_batch_id: int
    removed: bool
    kept_related: list[str] | None
    erased_related: frozenset[str]
    problems: int  # its ingest_errors rows (one per problem)
    requests: frozenset[str]


def rewrites_table(control_schema: str) -> str:
    return f"{control_schema}.erasure_rewrites"


def rewrite_erased_lines(
    spark: SparkSession,
    control_schema: str,
    streams: Iterable[StagedStream],
    ingest_errors: str,
    tenants: Iterable[str] | None,
    every_line: bool = False,
) -> list[tuple[str, str, str, int, int]]:
    """Rewrite the staged lines the erased set reaches and that no run rewrote yet (with
    `every_line`, every staged line: a full refresh stages the landing files again); returns
    (tenant_id, request_id, table, rows removed, rows rewritten) per request and table."""
    erased_set = erased_set_table(control_schema)
    if not spark.catalog.tableExists(erased_set):
        return []
    salts = salts_table(control_schema)
    per_request = spark.sql(erased_sets_sql(erased_set, salts, per_request=True))
    hashes = spark.table(erased_set).groupBy("tenant_id").agg(F.count("*").alias("hashes"))
    if tenants is not None:
        scope = list(tenants)
        per_request = per_request.where(F.col("tenant_id").isin(*scope))
        hashes = hashes.where(F.col("tenant_id").isin(*scope))
    hashes_now = {row["tenant_id"]: row["hashes"] for row in hashes.collect()}
    if not hashes_now:
        return []
    create_control_table(
        spark, rewrites_table(control_schema), REWRITES_COLUMNS, "tenant_id,stream"
    )
    done = {} if every_line else looked_at(spark, control_schema)
    removals: list[tuple[str, str, str, int, int]] = []
    states: list[tuple[str, str, int, int]] = []
    for stream in streams:
        if not spark.catalog.tableExists(stream.staging):
            continue
        since = {
            tenant: (
                done[(tenant, stream.stream)][0]
                if done.get((tenant, stream.stream), (None, None))[1] == count
                else -1
            )
            for tenant, count in hashes_now.items()
        }
        staged = staged_since(spark, stream.staging, since)
        through = {
            row["tenant_id"]: row["through"]
            for row in staged.groupBy("tenant_id")
            .agg(F.max("ingest_batch_id").alias("through"))
            .collect()
        }
        touched = touched_lines(
            staged.where(~F.coalesce(F.col("is_erased"), F.lit(False))), per_request, stream
        )
        if touched:
            rewrite_stream(spark, stream, ingest_errors, touched)
            removals.extend(removal_counts(stream, touched))
        for tenant, count in hashes_now.items():
            previous = done.get((tenant, stream.stream), (-1, None))
            batch = max(through.get(tenant, -1), previous[0] if since[tenant] >= 0 else -1)
            if (batch, count) != previous:
                states.append((tenant, stream.stream, batch, count))
    record_looked_at(spark, control_schema, states)
    return removals


def looked_at(spark: SparkSession, control_schema: str) -> dict[tuple[str, str], tuple[int, int]]:
    """(through_batch_id, erased_hashes) per (tenant, stream), as the newest rewrite left them."""
    rows = spark.sql(
        f"select tenant_id, stream, max_by(struct(through_batch_id, erased_hashes), at) as done "
        f"from {rewrites_table(control_schema)} group by tenant_id, stream"
    ).collect()
    return {
        (row["tenant_id"], row["stream"]): (
            row["done"]["through_batch_id"],
            row["done"]["erased_hashes"],
        )
        for row in rows
    }


def record_looked_at(
    spark: SparkSession, control_schema: str, states: list[tuple[str, str, int, int]]
) -> None:
    if not states:
        return
    rows = spark.createDataFrame(
        states, "tenant_id string, stream string, through_batch_id bigint, erased_hashes bigint"
    ).withColumn("at", F.lit(datetime.now(UTC)).cast("timestamp"))
    retry_on_conflict(
        lambda: (
            rows.write.format("delta").mode("append").saveAsTable(rewrites_table(control_schema))
        )
    )


def staged_since(spark: SparkSession, staging: str, since: dict[str, int]) -> DataFrame:
    """The staged lines of the tenants in `since` in batches after each one's batch."""
    bounds = spark.createDataFrame(list(since.items()), "tenant_id string, since_batch_id bigint")
    return (
        spark.table(staging)
        .where(F.col("tenant_id").isin(*sorted(since)))
        .join(F.broadcast(bounds), "tenant_id")
        .where(F.col("ingest_batch_id") > F.col("since_batch_id"))
        .drop("since_batch_id")
    )


def touched_lines(
    lines: DataFrame, per_request: DataFrame, stream: StagedStream
) -> list[TouchedLine]:
    """The lines an erased set reaches (few: one person's), with what each request does."""
    with_sets = lines.join(F.broadcast(per_request), "tenant_id")
    removed = F.expr(stream.removed_sql)
    if stream.has_related:
        kept = F.expr(related_ids_kept_sql())
        erased_related = F.array_except(
            F.coalesce("related_ids", F.array()), F.coalesce(kept, F.array())
        )
    else:
        kept = F.lit(None).cast("array<string>")
        erased_related = F.array().cast("array<string>")
    found = (
        with_sets.select(
            "tenant_id",
            "staged_tenant_id",
            "source_file",
            "line_number",
            "ingest_batch_id",
            "request_id",
            removed.alias("removed"),
            kept.alias("kept_related"),
            erased_related.alias("erased_related"),
            F.coalesce(F.size("problems"), F.lit(0)).alias("problems"),
        )
        .where(F.col("removed") | (F.size("erased_related") > 0))
        .collect()
    )
    return merge_requests(found)


def merge_requests(found: list[Row]) -> list[TouchedLine]:
    """One TouchedLine per line from its (line, request) rows: removed when a request removes
    it; related ids kept as the intersection of what each request keeps."""
    by_line: dict[tuple[str, str, int], list[Row]] = defaultdict(list)
    for row in found:
        by_line[(row["staged_tenant_id"], row["source_file"], row["line_number"])].append(row)
    touched = []
    for rows in by_line.values():
        erased_related = frozenset(value for row in rows for value in row["erased_related"])
        first = rows[0]
        kept = (
            None
            if first["kept_related"] is None
            else [value for value in first["kept_related"] if value not in erased_related]
        )
        touched.append(
            TouchedLine(
                first["tenant_id"],
                first["staged_tenant_id"],
                first["source_file"],
                first["line_number"],
                first["ingest_batch_id"],
                any(row["removed"] for row in rows),
                kept,
                erased_related,
                max(row["problems"] for row in rows),
                frozenset(row["request_id"] for row in rows),
            )
        )
    return touched


FIX_SCHEMA = (
    "tenant_id string, staged_tenant_id string, source_file string, line_number bigint, "
    "ingest_batch_id bigint, is_removed boolean, kept_related array<string>, line string"
)


def rewrite_stream(
    spark: SparkSession, stream: StagedStream, ingest_errors: str, touched: list[TouchedLine]
) -> None:
    """Write the touched lines' changes: landing, then ingest_errors, then staging. The
    commits carry NEUTRAL_COMMIT_TAG (set in a session of their own, so that the run's other
    threads' commits do not): the readers that ran before them are not run again for them
    (profile_lake.run_planner), as they change nothing those readers compute."""
    texts = landed_texts(spark, stream.landing, touched)
    spark = spark.newSession()
    spark.conf.set(USER_METADATA_CONF, NEUTRAL_COMMIT_TAG)
    fixes = spark.createDataFrame(
        [
            (
                line.tenant_id,
                line.staged_tenant_id,
                line.source_file,
                line.line_number,
                line.ingest_batch_id,
                line.removed,
                line.kept_related,
                None
                if line.removed
                else without_erased_related(
                    texts.get((line.source_file, line.line_number)), line.erased_related
                ),
            )
            for line in touched
        ],
        FIX_SCHEMA,
    )
    fixes.createOrReplaceTempView(FIX_VIEW)
    tenants = ", ".join(f"'{tenant}'" for tenant in sorted({t.staged_tenant_id for t in touched}))
    place = (
        "target.source_file = fix.source_file and target.line_number = fix.line_number "
        "and target.ingest_batch_id = fix.ingest_batch_id"
    )
    merge(
        spark,
        f"merge into {stream.landing} as target using {FIX_VIEW} as fix "
        f"on target.tenant_id in ({tenants}) and target.tenant_id = fix.staged_tenant_id "
        f"and {place} "
        f"when matched and fix.is_removed then update set line = null, is_erased = true "
        f"when matched then update set line = fix.line",
    )
    if spark.catalog.tableExists(ingest_errors):
        merge(
            spark,
            f"merge into {ingest_errors} as target using {FIX_VIEW} as fix "
            f"on target.stream = '{stream.stream}' and target.tenant_id = fix.tenant_id "
            f"and {place} "
            f"when matched and fix.is_removed then delete "
            f"when matched and target.line is not null then update set line = fix.line",
        )
    merge(spark, staging_merge_sql(spark.table(stream.staging).columns, stream))


def staging_merge_sql(columns: list[str], stream: StagedStream) -> str:
    cleared = ", ".join(
        f"{column} = null"
        for column in columns
        if column not in STAGED_PLACE | {"problems", "is_accepted", "is_erased", "tenant_id"}
    )
    related = "related_ids = fix.kept_related, " if stream.has_related else ""
    return (
        f"merge into {stream.staging} as target using {FIX_VIEW} as fix "
        f"on target.staged_tenant_id = fix.staged_tenant_id "
        f"and target.source_file = fix.source_file and target.line_number = fix.line_number "
        f"and target.ingest_batch_id = fix.ingest_batch_id "
        f"when matched and fix.is_removed then update set {cleared}, "
        f"tenant_id = target.staged_tenant_id, "
        f"problems = filter(target.problems, erased_line_problem -> false), "
        f"is_accepted = false, is_erased = true "
        f"when matched then update set {related}"
        f"line = case when target.line is null then null else fix.line end"
    )


def merge(spark: SparkSession, statement: str) -> None:
    retry_on_conflict(lambda: spark.sql(statement))


def landed_texts(
    spark: SparkSession, landing: str, touched: list[TouchedLine]
) -> dict[tuple[str, int], str | None]:
    """The landed text of the lines that only relate to an erased identity."""
    related = [line for line in touched if not line.removed]
    if not related:
        return {}
    keys = spark.createDataFrame(
        [(line.staged_tenant_id, line.source_file, line.line_number) for line in related],
        "tenant_id string, source_file string, line_number bigint",
    )
    rows = (
        spark.table(landing)
        .where(F.col("tenant_id").isin(*sorted({line.staged_tenant_id for line in related})))
        .join(F.broadcast(keys), ["tenant_id", "source_file", "line_number"], "left_semi")
        .select("source_file", "line_number", "line")
        .collect()
    )
    return {(row["source_file"], row["line_number"]): row["line"] for row in rows}


def removal_counts(
    stream: StagedStream, touched: list[TouchedLine]
) -> list[tuple[str, str, str, int, int]]:
    """Rows removed and rewritten per request and table for the touched lines of one stream."""
    counts: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])
    staging_name = stream.staging.rsplit(".", 1)[-1]
    for line in touched:
        for request in line.requests:
            for table in (f"landing.{stream.stream}", staging_name):
                counts[(line.tenant_id, request, table)][0 if line.removed else 1] += 1
            if line.problems:
                counts[(line.tenant_id, request, "ingest_errors")][0 if line.removed else 1] += (
                    line.problems
                )
    return [(tenant, request, table, n[0], n[1]) for (tenant, request, table), n in counts.items()]
