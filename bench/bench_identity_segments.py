"""100 segments in one pass over profiles, as `profile_segments` compiles them (macro
segment_ids_sql: `flatten(array(if(<expr>, array('<id>'), array()), ...))` per row, written as
one Delta table), against 100 separate queries, one per segment, over the same Delta table of
profiles, each appending its members to a Delta table (what one model per segment would do).
Both give the same memberships (checked). Goal: 20x.

    .venv/bin/python bench/bench_identity_segments.py [profiles (default 200000)]
"""

from __future__ import annotations

import sys

from profile_lake.spark.identity_bench import bench_session, report, timed

SEGMENTS = 100


def segment_expressions() -> list[tuple[str, str]]:
    kinds = [
        "identity_count >= {k}",
        "record_count >= {k}",
        "exists(live_records, r -> r.record_type = 'event' and r.event_ts >= "
        "timestamp'2025-12-31' - make_interval(0, 0, 0, {k}))",
        "exists(identities, i -> i like 'email:%' and length(i) > {k} + 10) "
        "and not exists(live_records, r -> r.record_type = 'order')",
        "last_event_ts >= timestamp'2025-12-31' - make_interval(0, 0, 0, {k}) "
        "and size(identity_names) > 0",
    ]
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


def main() -> None:
    profiles = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    spark = bench_session("segments")
    spark.sql(f"""
        select
            'acme' as tenant_id,
            concat('email:p', id) as profile_id,
            transform(sequence(0, cast(id % 5 as int)),
                k -> concat('email:', id, '-', k)) as identities,
            if(id % 3 = 0, array(named_struct('identity_id', concat('email:p', id), 'name', 'N')),
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
            timestamp'2025-12-31' - make_interval(0, 0, 0, cast(id % 40 as int)) as last_event_ts
        from range({profiles})
    """).write.format("delta").mode("overwrite").saveAsTable("bench_profiles")
    table = "bench_profiles"
    segments = segment_expressions()

    def one_pass() -> None:
        spark.sql(
            f"create or replace table bench_profile_segments using delta as "
            f"{one_pass_sql(table, segments)}"
        )

    def separate() -> None:
        spark.sql(
            "create or replace table bench_segment_members "
            "(tenant_id string, profile_id string, segment_id string) using delta"
        )
        for segment_id, expression in segments:
            spark.sql(
                f"insert into bench_segment_members "
                f"select tenant_id, profile_id, '{segment_id}' as segment_id from {table} "
                f"where coalesce(({expression}), false)"
            )

    one_pass()  # warm-up (JIT, Delta log cache)
    ours, _ = timed(one_pass, repeat=2)
    theirs, _ = timed(separate, repeat=1)
    one_pass_members = spark.sql(
        "select tenant_id, profile_id, explode(segment_ids) as segment_id "
        "from bench_profile_segments"
    )
    separate_members = spark.table("bench_segment_members")
    assert one_pass_members.exceptAll(separate_members).isEmpty(), "one pass has extra members"
    assert separate_members.exceptAll(one_pass_members).isEmpty(), "one pass misses members"
    report(
        f"{SEGMENTS} segments over {profiles} profiles",
        ("one pass (profile_segments)", ours),
        (f"{SEGMENTS} separate queries", theirs),
        ">= 20x",
    )


if __name__ == "__main__":
    main()
