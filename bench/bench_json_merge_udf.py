"""JSON merge UDF: rows per second of the Arrow-based fold (mapInArrow, what the pipeline
uses) against a plain row-at-a-time Python UDF calling the same merge, same data, same run.

    .venv/bin/python bench/bench_json_merge_udf.py [--records 200000] [--fields 40]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time

from pyspark.sql import functions as F
from pyspark.sql import types as T

from profile_lake.jsonmerge import merge_events_json
from profile_lake.spark.records import fold_record_changes
from profile_lake.testing.session import profile_session


def _payload(rng: random.Random, fields: int) -> str:
    nested = {
        f"f{i}": rng.choice([rng.randint(0, 1000), f"v{rng.randint(0, 99)}", None])
        for i in range(fields)
    }
    return json.dumps({"profile": nested, "score": rng.random(), "tags": ["a", "b"]})


def _changes(spark, records: int, fields: int):
    rng = random.Random(7)
    payloads = [_payload(rng, fields) for _ in range(500)]
    rows = spark.range(records).select(
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
    return rows.cache()


def _plain_udf_fold(changes):
    schema = T.StructType(
        [T.StructField("state_json", T.StringType()), T.StructField("payload", T.StringType())]
    )

    @F.udf(returnType=schema, useArrow=False)
    def fold(events):
        merged = merge_events_json(
            None, [(e["op"], (e["event_micros"], e["seq"]), e["payload"]) for e in events]
        )
        return (merged.state_json, merged.payload_json)

    grouped = changes.groupBy("tenant_id", "record_id").agg(
        F.collect_list(
            F.struct("op", F.unix_micros("event_ts").alias("event_micros"), "seq", "payload")
        ).alias("events")
    )
    return grouped.select("tenant_id", "record_id", fold("events").alias("folded"))


def _time(label: str, frame, rows: int) -> float:
    started = time.perf_counter()
    frame.write.format("noop").mode("overwrite").save()
    seconds = time.perf_counter() - started
    print(f"  {label:<32} {seconds:7.1f} s  {rows / seconds:10,.0f} rows/s")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--fields", type=int, default=40)
    args = parser.parse_args()
    os.environ.setdefault("PROFILE_LAKE_HOME", tempfile.mkdtemp(prefix="bench-json-merge-"))
    spark = profile_session()
    changes = _changes(spark, args.records, args.fields)
    payload_bytes = len(changes.first()["payload"])
    print(f"JSON merge UDF, {args.records:,} records, ~{payload_bytes} byte payloads")
    changes.count()
    _time("warm-up (arrow)", fold_record_changes(changes.limit(1000), None), 1000)
    arrow = _time("arrow (mapInArrow)", fold_record_changes(changes, None), args.records)
    plain = _time("plain python udf", _plain_udf_fold(changes), args.records)
    print(
        f"ratio plain/arrow time: {plain / arrow:.2f}x (arrow is {plain / arrow:.2f} times as fast)"
    )


if __name__ == "__main__":
    main()
