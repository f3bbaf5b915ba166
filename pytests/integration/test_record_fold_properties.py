"""The Spark fold of record changes equals a plain in-order Python fold, for random events,
random arrival orders and random splits into runs (exact duplicates included)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profile_lake.jsonmerge import reference_fold, version_of
from profile_lake.spark.records import current_states, fold_record_changes, prior_states

pytestmark = pytest.mark.integration

BASE = datetime(2026, 1, 1, tzinfo=UTC)
CHANGES_SCHEMA = (
    "tenant_id string, record_id string, op string, record_type string, primary_id string, "
    "related_ids array<string>, payload string, event_ts timestamp, seq bigint, "
    "ingest_batch_id bigint"
)

keys = st.sampled_from(["a", "b", "c"])
leaves = st.one_of(st.integers(-3, 3), st.sampled_from(["x", "y"]), st.none(), st.just([1, 2]))
patches = st.recursive(
    st.dictionaries(keys, leaves, max_size=3),
    lambda inner: st.dictionaries(keys, st.one_of(leaves, inner), max_size=3),
    max_leaves=8,
)
events = st.lists(
    st.tuples(
        st.sampled_from(["r1", "r2"]),
        st.sampled_from(["upsert", "upsert", "upsert", "delete"]),
        st.integers(0, 5),  # event_ts in minutes: ties on purpose, broken by seq
        patches,
    ),
    min_size=1,
    max_size=12,
)


def _rows(batch: list[tuple], batch_id: int) -> list[tuple]:
    return [
        (
            "acme",
            record,
            op,
            "profile",
            f"email:{record}@x.test",
            [],
            json.dumps(payload) if op == "upsert" else None,
            BASE + timedelta(minutes=minute),
            seq,
            batch_id,
        )
        for record, op, minute, seq, payload in batch
    ]


def visible(state) -> tuple | None:
    """What `records` shows of a live state (None: no row)."""
    if state is None or state["is_deleted"]:
        return None
    return tuple(
        state[name] for name in ("record_type", "primary_id", "related_ids", "event_ts", "payload")
    )


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(events=events, order=st.randoms(use_true_random=False), runs=st.integers(1, 3))
def test_spark_fold_equals_in_order_fold(spark, events, order, runs) -> None:
    # distinct (event_ts, seq) per record, as producers guarantee; then duplicates and shuffling
    unique = [(r, op, minute, seq, p) for seq, (r, op, minute, p) in enumerate(events)]
    arrivals = unique + [order.choice(unique) for _ in range(len(unique) // 3)]
    order.shuffle(arrivals)
    cuts = sorted(order.sample(range(1, len(arrivals)), min(runs - 1, len(arrivals) - 1)))
    batches = [arrivals[a:b] for a, b in zip([0, *cuts], [*cuts, len(arrivals)], strict=True)]

    stored = None  # every version appended so far, as int_record_states keeps them
    for batch_id, batch in enumerate(batches):
        changes = spark.createDataFrame(_rows(batch, batch_id), CHANGES_SCHEMA)
        # the model's look-up of prior states, keys broadcast or shuffled
        prior = (
            None
            if stored is None
            else prior_states(stored, changes, broadcast_max_changes=order.choice([0, 1000]))
        )
        folded = fold_record_changes(changes, prior)
        # each version says what the record was before it (record_notifications' change type,
        # the identity graph's removed identities): live, with which primary_id
        live_before = (
            {}
            if stored is None
            else {
                row["record_id"]: row
                for row in current_states(stored).collect()
                if not row["is_deleted"]
            }
        )
        for row in folded.collect():
            before = live_before.get(row["record_id"])
            assert row["prior_is_live"] == (before is not None), row
            assert row["prior_primary_id"] == (before and before["primary_id"]), row
            # a version changes the record exactly when what records shows of it differs
            # (duplicates, and late events the fold absorbs, change nothing)
            assert row["changes_record"] == (visible(row) != visible(before)), row
        appended = folded if stored is None else stored.unionByName(folded)
        stored = spark.createDataFrame(appended.collect(), folded.schema)

    found = {
        row["record_id"]: json.loads(row["payload"])
        for row in current_states(stored).collect()
        if not row["is_deleted"]
    }
    expected = {}
    for record in {e[0] for e in unique}:
        history = [
            (
                op,
                version_of(BASE + timedelta(minutes=minute), seq),
                payload if op == "upsert" else None,
            )
            for r, op, minute, seq, payload in unique
            if r == record
        ]
        payload = reference_fold(history)
        if payload is not None:
            expected[record] = payload
    assert found == expected
