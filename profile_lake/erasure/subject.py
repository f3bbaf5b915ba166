"""A request's subject (SPEC.md section 7), fixed when a run first applies the request.

The subject is the profile the named identity belongs to in that run: every canonical identity
of that profile, every identity mapped to one of them, and the records whose primary_id is one
of those identities. An identity the lake has never seen is a subject on its own. A request
keeps only the hash of the identity it names, so the named identity is found by hashing the
identities the lake knows (`identity_map`); one that matches none was never seen.

Pure: the Spark side (profile_lake.spark.erasure_apply) reads one person's rows and passes
them here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from profile_lake.erasure.hashing import ErasedSet, erasure_hash


@dataclass(frozen=True)
class PersonRows:
    """What the lake holds of the person a request names, as the run finds it.

    `named`: the identity the request names, None when no identity of the lake hashes to the
    request's hash (never seen); `canonical`: its canonical identity (identity_map);
    `profile_canonicals`: the canonical identities of the profile holding `canonical`
    (profile_identities; empty when in none); `mapped`: (identity_id, canonical_id) rows of
    identity_map whose canonical is one of them; `records`: (record_id, primary_id) of the
    records whose primary_id may be one of the subject's identities."""

    named: str | None
    canonical: str | None = None
    profile_canonicals: frozenset[str] = frozenset()
    mapped: tuple[tuple[str, str], ...] = ()
    records: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Subject:
    """The identities and record_ids a request erases, in plain text for the run that fixes
    them only: the lake keeps their hashes (`erased_set`)."""

    identity_hash: str
    identities: frozenset[str]
    record_ids: frozenset[str]

    def erased_set(self, salt: bytes) -> ErasedSet:
        """The hashes to keep: the named identity's hash (the request's own, also when the
        identity was never seen), every identity's and every record_id's."""
        fixed = ErasedSet.of_values(salt, self.identities, self.record_ids)
        return ErasedSet(salt, fixed.identity_hashes | {self.identity_hash}, fixed.record_hashes)


def subject_identities(rows: PersonRows) -> frozenset[str]:
    """The subject's identities: empty for an identity never seen (its hash alone is kept)."""
    if rows.named is None:
        return frozenset()
    canonical = rows.canonical or rows.named
    canonicals = set(rows.profile_canonicals) | {canonical}
    mapped = {identity for identity, to in rows.mapped if to in canonicals}
    return frozenset({rows.named} | canonicals | mapped)


def fix_subject(identity_hash: str, rows: PersonRows) -> Subject:
    identities = subject_identities(rows)
    records = frozenset(record for record, primary in rows.records if primary in identities)
    return Subject(identity_hash, identities, records)


def named_identity(salt: bytes, identity_hash: str, known: Iterable[str]) -> str | None:
    """The identity among `known` whose hash is the request's (None: never seen)."""
    for identity in known:
        if erasure_hash(salt, "identity", identity) == identity_hash:
            return identity
    return None
