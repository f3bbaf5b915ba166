"""Instants as integer microseconds since the epoch, written as ISO-8601 with a zone."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from profile_lake.generator.fastrandom import below, between, pick

SECOND = 1_000_000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR
WINDOW = 60 * DAY  # generated instants fall in [ingest_base - WINDOW, ingest_base - MINUTE)

_EPOCH = datetime(1970, 1, 1)
_TIMESPECS = {0: "seconds", 3: "milliseconds", 6: "microseconds"}
# zone offsets in minutes; "Z" is offset 0 written as Z, "+00:00" is offset 0 written out
ZONES: tuple[tuple[str, int], ...] = (
    ("Z", 0),
    ("Z", 0),
    ("Z", 0),
    ("+00:00", 0),
    ("+02:00", 120),
    ("+01:00", 60),
    ("-05:00", -300),
    ("-05:30", -330),
    ("+05:45", 345),
    ("+09:00", 540),
    ("-08:00", -480),
    ("+14:00", 840),
)


def to_micros(value: datetime) -> int:
    """A zoned datetime as microseconds since the epoch."""
    delta = value.astimezone(UTC).replace(tzinfo=None) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * SECOND + delta.microseconds


def needed_digits(micros: int) -> int:
    """Fraction digits needed to write the instant exactly: 0, 3 or 6."""
    if micros % SECOND == 0:
        return 0
    return 3 if micros % 1000 == 0 else 6


def format_instant(micros: int, zone: int, digits: int) -> str:
    """Write an instant in zone ZONES[zone] with `digits` fraction digits (0, 3 or 6)."""
    suffix, offset = ZONES[zone]
    local = _EPOCH + timedelta(microseconds=micros + offset * MINUTE)
    return local.isoformat(timespec=_TIMESPECS[digits]) + suffix


def random_format(rng: random.Random, micros: int) -> tuple[int, int]:
    """A random zone and a fraction width that writes the instant exactly (sometimes padded)."""
    digits = needed_digits(micros)
    if digits < 6 and rng.random() < 0.2:
        digits += 3
    return below(rng, len(ZONES)), digits


def write_random(rng: random.Random, micros: int) -> str:
    """The instant in a random zone and width."""
    zone, digits = random_format(rng, micros)
    return format_instant(micros, zone, digits)


PRECISIONS: tuple[int, ...] = (SECOND, SECOND, 1000, 1)


def snap(rng: random.Random, micros: int) -> int:
    """Round an instant up to a random precision: whole seconds, millis or micros."""
    return round_up(micros, pick(rng, PRECISIONS))


def next_instant(rng: random.Random, previous: int, mean_gap: int) -> int:
    """An instant after `previous`, an exponential gap around `mean_gap` later."""
    gap = max(1, int(rng.expovariate(1.0 / mean_gap)))
    return snap(rng, previous + gap)


def round_up(micros: int, precision: int) -> int:
    """The smallest multiple of `precision` that is >= micros."""
    return -(-micros // precision) * precision


def plan_seqs(rng: random.Random, instants: list[int], seq_base: int) -> list[int]:
    """Seq per event of one key: strictly increasing within equal instants (they break the
    tie), unrelated otherwise; every seq at or above `seq_base`, the batch's own range."""
    seqs: list[int] = []
    for position, instant in enumerate(instants):
        if position and instant == instants[position - 1]:
            seqs.append(seqs[-1] + between(rng, 1, 3))
        else:
            seqs.append(seq_base + between(rng, 0, 9))
    return seqs
