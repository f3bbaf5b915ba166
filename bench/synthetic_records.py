"""SQL shapes of synthetic records shared by the benchmarks (bench/): realistic payloads, so a
rewrite of records costs what it would on real data (a repeated character compresses to
nothing in Parquet, which would make rewriting records look cheap)."""

from __future__ import annotations

# Full records: ~330-byte payloads of scalars, arrays and nested objects.
FULL_PAYLOAD = """to_json(named_struct(
    'name', concat('Name ', {n}),
    'age', cast({n} % 90 as int),
    'city', element_at(array('oslo', 'lima', 'pune', 'kobe', 'lyon', 'graz', 'cork', 'bern'),
        cast({n} % 8 + 1 as int)),
    'score', round({u3} * 100, 2),
    'tags', array(concat('t', {n} % 7), concat('t', {n} % 11)),
    'address', named_struct('street', concat({n} % 500, ' Main St'), 'zip',
        lpad(cast({n} % 99999 as string), 5, '0')),
    'consent', named_struct('email', {n} % 2 = 0, 'sms', {n} % 3 = 0),
    'ltv', {n} % 10000,
    'segment', element_at(array('gold', 'silver', 'bronze'), cast({n} % 3 + 1 as int)),
    'notes', repeat('x', cast({n} % 64 as int))
))"""
# Patches: a scalar replaced, a nested key merged, a key removed (null) one time in four.
PATCH_PAYLOAD = """to_json(named_struct(
    'score', round({u3} * 100, 2),
    'consent', named_struct('sms', {u3} < 0.5),
    'notes', if(event % 4 = 0, null, concat('patched ', event))
), map('ignoreNullFields', 'false'))"""


def uniform(column: str, salt: int) -> str:
    """A deterministic uniform [0, 1) of a column (SQL), a decimal: cast a record number made
    from it to bigint, or it hashes (hence its tenant) differently from the same number made
    by `range`."""
    return f"(pmod(xxhash64({column}, {salt}), 1000000) / 1000000.0)"
