"""The records an applied erasure changes, folded again (SPEC.md section 7).

int_record_states folds each run's new changes onto each record's stored state. An erasure
removes lines that were folded already, so the records it touches (a line of theirs removed,
or an erased related identity) are folded again from all of their remaining lines: the state
a fold of the input without the erased lines gives. A record with no line left becomes a
tombstone with no identity, no payload and an empty merge tree, so a later line of it folds
as if the erased ones never landed.

The new version carries the batch of the request line (or a newer one), past every reader's
watermark of the tenant: records applies it, record_notifications sends its change with the
reason `erasure`, and the identity graph drops the links of its prior identities (an erased
one is not kept: the graph learns of those from identity_map's deletes). An erasure
is pending for a tenant while the newest version of its states is older than the request's
batch, so a run killed before the versions were appended refolds again.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from profile_lake.erasure.filtering import identity_erased_sql, related_ids_kept_sql
from profile_lake.jsonmerge import merge_events_json
from profile_lake.spark.erasure_filter import (
    touching_erased,
    with_erased_set,
    without_erased_lines,
)
from profile_lake.spark.records import (
    PRIOR_VISIBLE,
    RECORD_KEY,
    current_states,
    fold_record_changes,
    visible_state,
)

ERASURE_REASON = "erasure"
CHANGE_REASON = "change_reason"
# the merge tree of a record without events: what a tombstone of an erasure holds
EMPTY_STATE_JSON = merge_events_json(None, []).state_json


def pending_erasures(applications: DataFrame, requests: DataFrame, states: DataFrame) -> DataFrame:
    """(tenant_id, erasure_batch_id): tenants with an applied request (`applications`,
    int_erasure_applications) whose request line's batch, as staged now
    (`requests`, stg_erasures__requests), is past the newest version of their states."""
    applied = applications.where(F.col("event") == "fixed").select(
        "tenant_id", "source_file", "line_number"
    )
    batches = applied.join(
        requests.select("tenant_id", "source_file", "line_number", "ingest_batch_id"),
        ["tenant_id", "source_file", "line_number"],
    )
    watermarks = states.groupBy("tenant_id").agg(F.max("last_ingest_batch_id").alias("watermark"))
    return (
        batches.join(watermarks, "tenant_id", "left")
        .where(F.col("ingest_batch_id") > F.coalesce(F.col("watermark"), F.lit(-1)))
        .groupBy("tenant_id")
        .agg(F.max("ingest_batch_id").alias("erasure_batch_id"))
    )


def touched_records(changes: DataFrame, erased: DataFrame, pending: DataFrame) -> DataFrame:
    """Keys of the records of pending tenants that the erased set changes, from all of their
    accepted `changes` (every batch)."""
    of_pending = changes.join(F.broadcast(pending.select("tenant_id")), "tenant_id", "left_semi")
    return touching_erased(of_pending, erased).select(*RECORD_KEY).distinct()


def refolded_versions(
    changes: DataFrame,
    erased: DataFrame,
    pending: DataFrame,
    touched: DataFrame,
    states: DataFrame,
) -> DataFrame:
    """One new version of each touched record, folded from its remaining lines and compared
    with its current state (the int_record_states columns, `change_reason` 'erasure' for a
    record folded before)."""
    remaining = without_erased_lines(changes.join(touched, RECORD_KEY, "left_semi"), erased)
    folded = fold_record_changes(remaining, None).drop(
        "prior_is_live", "prior_primary_id", "prior_related_ids", "changes_record"
    )
    current = with_erased_set(current_states(states.join(touched, RECORD_KEY, "left_semi")), erased)
    live = ~F.col("is_deleted")
    # the identities whose links the graph drops, but an erased one: identity_map's deletes
    # tell the graph of those, and the version keeps no identity of the subject
    kept_primary = live & ~F.expr(identity_erased_sql("primary_id"))
    prior = current.select(
        *RECORD_KEY,
        live.alias("prior_is_live"),
        F.when(kept_primary, F.col("primary_id")).alias("prior_primary_id"),
        F.when(live, F.expr(related_ids_kept_sql())).alias("prior_related_ids"),
        visible_state().alias(PRIOR_VISIBLE),
        F.lit(True).alias("has_prior"),
    )
    versions = (
        touched.join(folded, RECORD_KEY, "left")
        .join(prior, RECORD_KEY, "left")
        .join(F.broadcast(pending), "tenant_id")
        # a record never folded before whose every line is erased leaves nothing to write
        .where(F.col("state_json").isNotNull() | F.col("has_prior").isNotNull())
    )
    return (
        versions.select(
            *RECORD_KEY,
            *[
                F.col(name)
                for name in ("op", "record_type", "primary_id", "related_ids", "event_ts", "seq")
            ],
            F.greatest(
                F.coalesce("last_ingest_batch_id", "erasure_batch_id"), F.col("erasure_batch_id")
            ).alias("last_ingest_batch_id"),
            F.coalesce("prior_is_live", F.lit(False)).alias("prior_is_live"),
            "prior_primary_id",
            "prior_related_ids",
            F.coalesce("state_json", F.lit(EMPTY_STATE_JSON)).alias("state_json"),
            "payload",
            F.coalesce("is_deleted", F.lit(True)).alias("is_deleted"),
            # a record first folded now is an insert of the lines that landed, not a change
            # the erasure made
            F.when(F.col("has_prior").isNotNull(), F.lit(ERASURE_REASON)).alias(CHANGE_REASON),
            PRIOR_VISIBLE,
        )
        .withColumn("changes_record", ~visible_state().eqNullSafe(F.col(PRIOR_VISIBLE)))
        .drop(PRIOR_VISIBLE)
    )
