"""JSON merge UDF: rows per second of the Arrow-based fold (mapInArrow, what the pipeline
uses) against a plain row-at-a-time Python UDF calling the same merge, and against Spark's
Arrow-optimized row-at-a-time UDF (`useArrow=True`), same data, same run.

All three fold the same cached input (`fold_input`: one row per record with its events and
prior state, as int_record_states builds it), so the figures compare how rows reach the
merge and come back, not the grouping before it. They run interleaved, best of three each
after a warm-up of each, since the first runs of a session pay for Python workers and the
JVM's compiles.

    .venv/bin/python bench/bench_json_merge_udf.py [--records 200000] [--fields 40]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from collections.abc import Callable

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from profile_lake.spark.records import (
    FOLDED_COLUMNS,
    fold_batches,
    fold_input,
    fold_row,
    folded_schema,
)
from profile_lake.spark.session import profile_session

REPEATS = 3
WARM_UP_ROWS = 20_000


def _payload(rng: random.Random, fields: int) -> str:
    nested = {
        f"f{i}": rng.choice([rng.randint(0, 1000), f"v{rng.randint(0, 99)}", None])
        for i in range(fields)
    }
    return json.dumps({"profile": nested, "score": rng.random(), "tags": ["a", "b"]})


def _changes(spark, records: int, fields: int) -> DataFrame:
    rng = random.Random(7)
    payloads = [_payload(rng, fields) for _ in range(500)]
    return spark.range(records).select(
        F.lit("acme").alias("tenant_id"),
        F.concat(F.lit("r"), F.col("id")).alias("record_id"),
        F.lit("upsert").alias("op"),
        F.lit("profile").alias("record_type"),
        F.lit("email:a@x.test").alias("primary_id"),
        F.array().cast("array<string>").alias("related_ids"),
        F.element_at(
            F.array(*[F.lit(p) for p in payloads]), (F.col("id") % len(payloads) + 1).cast("int")
        ).alias("payload"),
        F.timestamp_seconds(F.lit(1_767_225_600) + F.col("id") % 1000).alias("event_ts"),
        (F.col("id") % 7).alias("seq"),
        F.lit(0).cast("bigint").alias("ingest_batch_id"),
    )


def _row_udf_fold(prepared: DataFrame, use_arrow: bool) -> DataFrame:
    """The same fold as a row-at-a-time UDF: pickled rows, or Arrow batches (`use_arrow`)."""
    folded_type = T.StructType(
        [field for field in folded_schema(prepared) if field.name in FOLDED_COLUMNS.names]
    )
    fold = F.udf(fold_row, returnType=folded_type, useArrow=use_arrow)
    kept = [name for name in prepared.columns if name not in ("prior_state_json", "events")]
    return prepared.select(*kept, fold("prior_state_json", "events").alias("folded")).select(
        *kept, "folded.*"
    )


def _seconds(frame: DataFrame) -> float:
    started = time.perf_counter()
    frame.write.format("noop").mode("overwrite").save()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--fields", type=int, default=40)
    args = parser.parse_args()
    os.environ.setdefault("PROFILE_LAKE_HOME", tempfile.mkdtemp(prefix="bench-json-merge-"))
    spark = profile_session()
    prepared = fold_input(_changes(spark, args.records, args.fields), None).cache()
    prepared.count()
    payload_bytes = len(prepared.first()["events"][0]["payload"])
    print(f"JSON merge UDF, {args.records:,} records, ~{payload_bytes} byte payloads")
    ways: dict[str, Callable[[DataFrame], DataFrame]] = {
        "arrow batches (mapInArrow)": lambda frame: frame.mapInArrow(
            fold_batches, folded_schema(frame)
        ),
        "plain python udf": lambda frame: _row_udf_fold(frame, use_arrow=False),
        "arrow-optimized python udf": lambda frame: _row_udf_fold(frame, use_arrow=True),
    }
    warm_up = prepared.limit(WARM_UP_ROWS).cache()
    warm_up.count()
    for fold in ways.values():
        _seconds(fold(warm_up))
    best = dict.fromkeys(ways, float("inf"))
    for attempt in range(REPEATS):
        for label, fold in ways.items():
            seconds = _seconds(fold(prepared))
            best[label] = min(best[label], seconds)
            print(f"  {attempt + 1} of {REPEATS}  {label:<28} {seconds:7.1f} s", flush=True)
    print(f"best of {REPEATS}:")
    for label, seconds in best.items():
        print(f"  {label:<32} {seconds:7.1f} s  {args.records / seconds:10,.0f} rows/s")
    arrow = best["arrow batches (mapInArrow)"]
    for label in list(ways)[1:]:
        print(f"ratio {label} / mapInArrow time: {best[label] / arrow:.2f}x")


if __name__ == "__main__":
    main()
