"""100 segments in one pass over profiles, as `profile_segments` compiles them (macro
segment_ids_sql: `flatten(array(if(<expr>, array('<id>'), array()), ...))` per row, written as
one Delta table), against 100 separate queries, one per segment, over the same Delta table of
profiles, each appending its members to a Delta table (what one model per segment would do).
Goal: 20x.

Two sets of the same 100 questions, each timed both ways in one run:
- "lambdas": 40 segments ask about record types with `exists(live_records, r -> ..)`;
- "maps": those ask the per-type maps `last_event_ts_by_type['event'] >= ..` or
  `record_count_by_type['order']` instead (the columns `profiles` has for it); the 20 lambdas
  over `identities` stay.
Spark compiles a map look-up but interprets a lambda row by row, so the second set is what
the docs recommend. All four give the same memberships (checked).

    .venv/bin/python bench/bench_identity_segments.py [profiles (default 200000)]
"""

from __future__ import annotations

import sys
from typing import Any

from plumbing import bench_session, report, timed

SEGMENTS = 100


# each kind is one question; {k} varies it. "lambdas" and "maps" ask the same questions.
SEGMENT_KINDS = {
    "lambdas": [
        "identity_count >= {k}",
        "record_count >= {k}",
        "exists(live_records, r -> r.record_type = 'event' and r.event_ts >= "
        "timestamp'2025-12-31' - make_interval(0, 0, 0, {k}))",
        "exists(identities, i -> i like 'email:%' and length(i) > {k} + 10) "
        "and not exists(live_records, r -> r.record_type = 'order')",
        "last_event_ts >= timestamp'2025-12-31' - make_interval(0, 0, 0, {k}) "
        "and size(identity_names) > 0",
    ],
    "maps": [
        "identity_count >= {k}",
        "record_count >= {k}",
        "last_event_ts_by_type['event'] >= timestamp'2025-12-31' - make_interval(0, 0, 0, {k})",
        "exists(identities, i -> i like 'email:%' and length(i) > {k} + 10) "
        "and coalesce(record_count_by_type['order'], 0) = 0",
        "last_event_ts >= timestamp'2025-12-31' - make_interval(0, 0, 0, {k}) "
        "and size(identity_names) > 0",
    ],
}


def segment_expressions(style: str = "lambdas") -> list[tuple[str, str]]:
    kinds = SEGMENT_KINDS[style]
    return [
        (f"segment_{index:03d}", kinds[index % len(kinds)].format(k=index % 20 + 1))
        for index in range(SEGMENTS)
    ]


def one_pass_sql(table: str, segments: list[tuple[str, str]]) -> str:
    flags = ",\n".join(
        f"if(coalesce(({expression}), false), array('{segment_id}'), "
        f"cast(array() as array<string>))"
        for segment_id, expression in segments
    )
    return f"select tenant_id, profile_id, flatten(array({flags})) as segment_ids from {table}"


def create_profiles(spark: Any, profiles: int) -> str:
    """A Delta table shaped like `profiles` (the per-type maps derived from live_records)."""
    spark.sql(f"""
        with generated as (
            select
                'acme' as tenant_id,
                concat('email:p', id) as profile_id,
                transform(sequence(0, cast(id % 5 as int)),
                    k -> concat('email:', id, '-', k)) as identities,
                if(id % 3 = 0,
                   array(named_struct('identity_id', concat('email:p', id), 'name', 'N')),
                   array()) as identity_names,
                transform(sequence(0, cast(id % 7 as int)), k -> named_struct(
                    'record_id', concat('r', id, '-', k),
                    'record_type',
                    element_at(array('event', 'profile', 'order'), cast(k % 3 + 1 as int)),
                    'event_ts',
                    timestamp'2025-12-31' - make_interval(0, 0, 0, cast((id + k) % 40 as int))
                )) as live_records,
                cast(id % 5 + 1 as bigint) as identity_count,
                cast(id % 7 + 1 as bigint) as record_count,
                timestamp'2025-11-01' as first_event_ts,
                timestamp'2025-12-31' - make_interval(0, 0, 0, cast(id % 40 as int))
                    as last_event_ts
            from range({profiles})
        )

        select
            *,
            map_from_entries(transform(
                array_sort(array_distinct(transform(live_records, r -> r.record_type))),
                t -> struct(t, cast(size(filter(live_records, r -> r.record_type = t)) as bigint))
            )) as record_count_by_type,
            map_from_entries(transform(
                array_sort(array_distinct(transform(live_records, r -> r.record_type))),
                t -> struct(t, array_max(transform(
                    filter(live_records, r -> r.record_type = t), r -> r.event_ts)))
            )) as last_event_ts_by_type
        from generated
    """).write.format("delta").mode("overwrite").saveAsTable("bench_profiles")
    return "bench_profiles"


def members(spark: Any, table: str) -> Any:
    return spark.sql(
        f"select tenant_id, profile_id, explode(segment_ids) as segment_id from {table}"
    )


def same_members(left: Any, right: Any) -> bool:
    return left.exceptAll(right).isEmpty() and right.exceptAll(left).isEmpty()


def insert_separately(
    spark: Any, table: str, segments: list[tuple[str, str]], members_table: str
) -> None:
    """One query per segment, each appending its members to `members_table` (made empty)."""
    spark.sql(
        f"create or replace table {members_table} "
        "(tenant_id string, profile_id string, segment_id string) using delta"
    )
    for segment_id, expression in segments:
        spark.sql(
            f"insert into {members_table} "
            f"select tenant_id, profile_id, '{segment_id}' as segment_id from {table} "
            f"where coalesce(({expression}), false)"
        )


def compare(spark: Any, table: str, style: str, profiles: int) -> None:
    """Times one set of segments both ways and checks they give the same members."""
    segments = segment_expressions(style)

    def one_pass() -> None:
        spark.sql(
            f"create or replace table bench_segments_{style} using delta as "
            f"{one_pass_sql(table, segments)}"
        )

    def separate() -> None:
        insert_separately(spark, table, segments, f"bench_members_{style}")

    one_pass()  # warm-up (JIT, Delta log cache)
    ours, _ = timed(one_pass, repeat=2)
    theirs, _ = timed(separate, repeat=1)
    assert same_members(
        members(spark, f"bench_segments_{style}"), spark.table(f"bench_members_{style}")
    ), f"{style}: one pass and separate queries disagree"
    report(
        f"{SEGMENTS} segments ({style}) over {profiles} profiles",
        ("one pass (profile_segments)", ours),
        (f"{SEGMENTS} separate queries", theirs),
        ">= 20x",
    )


def main() -> None:
    profiles = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    spark = bench_session("segments")
    table = create_profiles(spark, profiles)
    # untimed, so that the first set measured does not pay alone for the JVM's first
    # compiles of the insert path
    insert_separately(spark, table, segment_expressions()[:10], "bench_members_warm_up")
    for style in SEGMENT_KINDS:
        compare(spark, table, style, profiles)
    assert same_members(
        members(spark, "bench_segments_lambdas"), members(spark, "bench_segments_maps")
    ), "the map-based segments do not ask the same questions as the lambda ones"


if __name__ == "__main__":
    main()
